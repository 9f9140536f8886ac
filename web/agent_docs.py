"""docs/agents.md's per-client sections, generated from echomem.agent_clients so the doc
says exactly what the dashboard's connect panel says. `echo-memory manage agent_docs`
rewrites the region between the markers; a test fails when the file differs."""

from __future__ import annotations

import re
from pathlib import Path

from echomem.agent_clients import clients

DOC = Path(__file__).resolve().parent.parent / "docs" / "agents.md"
# The single box's endpoint (echo-memory serve / quickstart listen on 127.0.0.1:8000).
DOC_ENDPOINT = "http://127.0.0.1:8000/mcp"
BEGIN = ("<!-- BEGIN generated from echomem/agent_clients.py by "
         "`echo-memory manage agent_docs --write` -->")
END = "<!-- END generated -->"
REGION = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)


class MarkersMissing(ValueError):
    pass


def generated_region(endpoint: str = DOC_ENDPOINT) -> str:
    parts = [BEGIN, ""]
    for client in clients(endpoint):
        parts += [f"## {client.label}", "", client.note, ""]
        for snippet in client.snippets:
            parts += [f"In {snippet.where}:", "", f"```{snippet.language}",
                      snippet.text.rstrip("\n"), "```", ""]
    parts.append(END)
    return "\n".join(parts)


def render(current: str) -> str:
    """The doc with its generated region brought up to date; the rest is left as written."""
    if not REGION.search(current):
        raise MarkersMissing(f"{DOC.name} has no generated region: put the lines {BEGIN!r} and "
                             f"{END!r} where the per-client sections belong")
    return REGION.sub(lambda _: generated_region(), current, count=1)
