"""The tool lists in the docs, generated from the registry (tools.registry.TOOLS) so that
they cannot drift from what tools/list answers: `echo-memory manage tool_docs --write`
rewrites each marked region, and a test fails when a doc differs from what this writes.

Prose elsewhere names tools without counting them; tests/mcp/test_tool_docs.py also fails
when a doc or the README states a number of tools outside these regions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.contract import Tool
from tools.registry import TOOLS

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "`echo-memory manage tool_docs --write`"
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


@dataclass(frozen=True)
class Region:
    doc: Path
    name: str
    render: Callable[[], str]

    @property
    def begin(self) -> str:
        return f"<!-- BEGIN {self.name} generated from tools/registry.py by {COMMAND} -->"

    @property
    def end(self) -> str:
        return f"<!-- END {self.name} -->"

    def pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.begin) + r".*?" + re.escape(self.end), re.DOTALL)

    def text(self) -> str:
        return f"{self.begin}\n\n{self.render()}\n\n{self.end}"


REGIONS = (Region(ROOT / "docs" / "agents.md", "tool list", tool_table),
           Region(ROOT / "docs" / "api.md", "REST tool routes", rest_table))


class MarkersMissing(ValueError):
    pass


def render(region: Region, current: str) -> str:
    """The doc with the region brought up to date; the rest is left as written."""
    if not region.pattern().search(current):
        raise MarkersMissing(f"{region.doc.name} has no {region.name} region: put the lines "
                             f"{region.begin!r} and {region.end!r} where it belongs")
    return region.pattern().sub(lambda _: region.text(), current, count=1)


def stale() -> list[Region]:
    """The regions whose doc differs from what the registry gives."""
    return [r for r in REGIONS if render(r, r.doc.read_text(encoding="utf-8"))
            != r.doc.read_text(encoding="utf-8")]
