"""The conformance suite's tools and its one prompt, registered with the gateway's extensions.

tests/conformance_app/diagnostics.py holds the SEP-2575 diagnostics and the tools-call-*
fixtures, tests/conformance_app/mrtr_fixtures.py those of input_required results. The memory
tools never depend on any of them.
"""

from __future__ import annotations

from typing import Any

from mcp_gateway import extensions
from tests.conformance_app.diagnostics import DIAGNOSTICS, Call, Diagnostic
from tests.conformance_app.mrtr_fixtures import FIXTURES, PROMPT, prompt_with_context

TOOLS: dict[str, Diagnostic] = {tool.name: tool for tool in [*DIAGNOSTICS, *FIXTURES]}


def _prompt(params: dict[str, Any], context) -> dict[str, Any]:
    return prompt_with_context(Call(params, context))


def install() -> None:
    # test_logging_tool sends log messages, so server/discover declares logging.
    extensions.register(tools=list(TOOLS.values()),
                        prompts={PROMPT["name"]: (PROMPT, _prompt)},
                        capabilities={"logging": {}})


def uninstall() -> None:
    extensions.clear()
