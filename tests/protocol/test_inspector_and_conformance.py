"""The MCP Inspector CLI and the official conformance suite, run by their own script
(tests/protocol/node/run-conformance.sh) against the live server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "node" / "run-conformance.sh"


def test_inspector_lists_and_calls_and_conformance_scenarios_pass(live):
    env = {**os.environ, "ECHO_MEM_ENDPOINT": live.endpoint, "ECHO_MEM_API_KEY": live.key}
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env,
                            timeout=540)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "all twelve tools listed" in output
    assert "query_memory answered" in output
    for scenario in ("server-initialize", "server-session-lifecycle", "ping", "tools-list",
                     "dns-rebinding-protection"):
        assert f"== conformance: {scenario}" in output
    assert "FAILURE" not in output
