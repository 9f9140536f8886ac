"""The MCP test client and the fake rate-limit clock, for tests that mix REST and MCP."""

from tests.mcp.conftest import fake_clock, mcp_for  # noqa: F401
