"""The MCP Inspector CLI and the official conformance suite (pinned in
tests/protocol/node/package.json), run by their own script (run-conformance.sh) against a
live server that serves the suite's diagnostic tools and fixtures
(tests/conformance_settings.py): the server scenarios that apply to a tools-only server, at
2025-11-25 and at 2026-07-28, every check of each passing by name, none excused."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "node" / "run-conformance.sh"
TOOLS_CALL = ("tools-call-simple-text", "tools-call-image", "tools-call-audio",
              "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error",
              "tools-call-with-progress")
INPUT_REQUIRED = tuple(f"input-required-result-{name}" for name in (
    "basic-elicitation", "basic-sampling", "basic-list-roots", "request-state",
    "multiple-input-requests", "multi-round", "missing-input-response", "result-type",
    "unsupported-methods", "tampered-state", "capability-check", "ignore-extra-params",
    "validate-input", "non-tool-request"))
SCENARIOS = {
    "2025-11-25": ("server-initialize", "server-session-lifecycle", "ping", "tools-list",
                   "dns-rebinding-protection", *TOOLS_CALL),
    "2026-07-28": ("server-stateless", "tools-list", "caching", "dns-rebinding-protection",
                   "http-header-validation", "sep-2164-resource-not-found", *TOOLS_CALL,
                   *INPUT_REQUIRED),
}
# The checks of server-stateless that call the suite's diagnostic tools: without them the
# suite reports these "Not testable"; here they must pass.
DIAGNOSED = ("sep-2575-server-rejects-undeclared-capability",
             "sep-2575-missing-capability-http-400",
             "sep-2575-http-server-no-independent-requests-on-stream",
             "sep-2575-server-no-log-without-loglevel")
CHECK = re.compile(r"^(passed|skipped|FAILURE) @ (\S+): (\S+)(.*)$")


def test_inspector_lists_and_calls_and_conformance_scenarios_pass(conformance_live):
    live = conformance_live
    env = {**os.environ, "ECHO_MEM_ENDPOINT": live.endpoint, "ECHO_MEM_API_KEY": live.key}
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env,
                            timeout=540)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "all twelve tools listed" in output
    assert "query_memory answered" in output
    for version, scenarios in SCENARIOS.items():
        for scenario in scenarios:
            assert f"== conformance: {scenario} @ {version}" in output
    checks = [CHECK.match(line).groups() for line in output.splitlines() if CHECK.match(line)]
    assert checks, output
    failed = [check for check in checks if check[0] == "FAILURE"]
    assert not failed, output
    assert "Not testable" not in output and "WARNING" not in output
    passed = {(version, name) for outcome, version, name, _ in checks if outcome == "passed"}
    for name in (*DIAGNOSED, "sep-2575-server-implements-discover"):
        assert ("2026-07-28", name) in passed, output
    for version in SCENARIOS:  # each tools-call scenario's check is named as the scenario
        for name in TOOLS_CALL:
            assert (version, name) in passed, output
    for name in ("sep-2322-elicitation-complete", "sep-2322-multi-round-r3",
                 "sep-2322-reject-tampered-state", "sep-2322-non-tool-complete",
                 "sep-2322-respect-client-capabilities"):
        assert ("2026-07-28", name) in passed, output
    # A skip is the suite saying a check does not apply (no subscriptions, no listChanged),
    # never a diagnostic tool it could not find.
    skipped = {name for outcome, _, name, _ in checks if outcome == "skipped"}
    assert not skipped & set(DIAGNOSED)
