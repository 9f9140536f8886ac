"""The MCP test client and the fake rate-limit clock, shared with tests/mcp."""

from tests.mcp.conftest import fake_clock, mcp_for  # noqa: F401
