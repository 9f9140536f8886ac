"""Tools, prompts and capabilities an installed app adds to /mcp beside the memory tools.

Production installs no such app, so these stay empty and tools/list is the memory tools
alone. The one user is the official conformance suite's test-only app
(tests/conformance_app), which tests/conformance_settings.py installs and whose
AppConfig.ready() fills these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class ExtraTool(Protocol):
    """A tool that builds its whole tools/call result itself (content blocks, isError)."""

    name: str
    title: str
    description: str
    # Served to 2026-07-28 requests only, never to a 2025 session.
    modern_only: bool

    def input_schema(self) -> dict[str, Any]: ...
    def output_schema(self) -> dict[str, Any] | None: ...
    def annotations(self) -> dict[str, Any]: ...
    def call(self, params: dict[str, Any], context: Any) -> dict[str, Any]: ...


PromptRun = Callable[[dict[str, Any], Any], dict[str, Any]]

TOOLS: dict[str, ExtraTool] = {}
# Prompts, by name: their prompts/list entry and their prompts/get (2026-07-28 only).
PROMPTS: dict[str, tuple[dict[str, Any], PromptRun]] = {}
# Capabilities server/discover declares beside the product's own.
CAPABILITIES: dict[str, Any] = {}


def register(*, tools: list[ExtraTool] = (), prompts: dict[str, tuple[dict, PromptRun]] | None
             = None, capabilities: dict[str, Any] | None = None) -> None:
    TOOLS.update({tool.name: tool for tool in tools})
    PROMPTS.update(prompts or {})
    CAPABILITIES.update(capabilities or {})


def clear() -> None:
    TOOLS.clear()
    PROMPTS.clear()
    CAPABILITIES.clear()


def registered() -> bool:
    return bool(TOOLS or PROMPTS or CAPABILITIES)


def served_tools(stateless: bool) -> dict[str, ExtraTool]:
    """What a request may list and call: a 2025 session only those that ask nothing of
    2026-07-28."""
    if not TOOLS:
        return {}
    return {name: tool for name, tool in TOOLS.items() if stateless or not tool.modern_only}


def served_prompts(stateless: bool) -> dict[str, tuple[dict[str, Any], PromptRun]]:
    return PROMPTS if stateless else {}
