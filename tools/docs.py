"""The tool lists in the docs, generated from the registry (tools.registry.TOOLS) so that
they cannot drift from what tools/list answers: `echo-memory manage tool_docs --write`
rewrites each marked region, and a test fails when a doc differs from what this writes.

Prose elsewhere names tools without counting them; tests/tools/test_tool_docs.py also fails
when a doc or the README states a number of tools outside these regions.
"""

from __future__ import annotations

import re

from echomem import doc_regions
from echomem.doc_regions import DOCS, Region
from tools.contract import Tool
from tools.registry import TOOLS

SOURCE = "tools/registry.py"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")


def sentences(text: str) -> list[str]:
    return _SENTENCE_END.split(" ".join(text.split()))


def what_it_does(tool: Tool) -> str:
    return sentences(tool.description)[0]


def cost(tool: Tool) -> str:
    """The description's sentence about units: every tool says what it costs."""
    return next((s for s in reversed(sentences(tool.description))
                 if s.startswith(("Costs", "Free"))), "")


def effect(tool: Tool) -> str:
    return "reads" if tool.read_only else "erases" if tool.destructive else "writes"


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names) or "none"


def tool_table() -> str:
    lines = [f"`tools/list` answers these {len(TOOLS)} tools, the same list for every key:",
             "", "| tool | title | what it does | effect | units |", "|---|---|---|---|---|"]
    lines += [f"| `{t.name}` | {t.title} | {what_it_does(t)} | {effect(t)} | {cost(t)} |"
              for t in TOOLS.values()]
    return "\n".join(lines)


def rest_table() -> str:
    lines = ["| method and path | arguments (`?`: optional) | reply fields |", "|---|---|---|"]
    for tool in TOOLS.values():
        schema = tool.input_schema()
        required = schema.get("required", [])
        arguments = [name if name in required else f"{name}?" for name in schema["properties"]]
        reply = "{" + ", ".join(tool.output_schema()["properties"]) + "}"
        lines.append(f"| `POST /api/v1/tools/{tool.name}` | {_names(arguments)} | "
                     f"`{reply}` |")
    return "\n".join(lines)


REGIONS = (Region(DOCS / "agents.md", "tool list", SOURCE, "tool_docs", tool_table),
           Region(DOCS / "api.md", "REST tool routes", SOURCE, "tool_docs", rest_table))


def stale() -> list[Region]:
    """The regions whose doc differs from what the registry gives."""
    return doc_regions.stale(REGIONS)
