"""The conformance suite's tools, by name: served only with ECHO_MEMORY_CONFORMANCE_TOOLS on.

mcp_gateway/diagnostics.py holds the SEP-2575 diagnostics and the tools-call-* fixtures,
mcp_gateway/mrtr_fixtures.py those of input_required results. The memory tools never depend
on any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from mcp_gateway.diagnostics import DIAGNOSTICS, Call, Diagnostic
from mcp_gateway.mrtr_fixtures import FIXTURES, PROMPT, prompt_with_context

TOOLS: dict[str, Diagnostic] = {tool.name: tool for tool in [*DIAGNOSTICS, *FIXTURES]}


def served(stateless: bool) -> dict[str, Diagnostic]:
    """What a request may list and call: none unless the setting is on; a 2025 session only
    those that ask nothing of 2026-07-28."""
    if not settings.MCP_CONFORMANCE_TOOLS:
        return {}
    return {name: tool for name, tool in TOOLS.items() if stateless or not tool.modern_only}


# The one fixture prompt (input_required on prompts/get): its prompts/list entry and its run.
PROMPTS: dict[str, tuple[dict[str, Any], Callable[[Call], dict[str, Any]]]] = {
    PROMPT["name"]: (PROMPT, prompt_with_context)}


def served_prompts(stateless: bool) -> dict[str, tuple[dict[str, Any], Callable]]:
    return PROMPTS if stateless and settings.MCP_CONFORMANCE_TOOLS else {}
