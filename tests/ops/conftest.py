"""The MCP test client and the fake rate-limit clock, shared with tests/mcp; the served
`echo-memory` processes of tests/cli."""

from tests.cli.conftest import servers  # noqa: F401
from tests.mcp.conftest import fake_clock, mcp_for  # noqa: F401
