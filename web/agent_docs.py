"""docs/agents.md's per-client sections, generated from echomem.agent_clients so the doc
says exactly what the dashboard's connect panel says. `echo-memory manage agent_docs`
rewrites the region between the markers; a test fails when the file differs."""

from __future__ import annotations

from echomem.agent_clients import clients
from echomem.doc_regions import DOCS, Region

# The single box's endpoint as `echo-memory serve` / quickstart print it (they listen on
# 127.0.0.1:8000 and name it localhost).
DOC_ENDPOINT = "http://localhost:8000/mcp"


def sections(endpoint: str = DOC_ENDPOINT) -> str:
    parts = []
    for client in clients(endpoint):
        parts += [f"## {client.label}", "", client.note, ""]
        for snippet in client.snippets:
            parts += [f"In {snippet.where}:", "", f"```{snippet.language}",
                      snippet.text.rstrip("\n"), "```", ""]
    return "\n".join(parts[:-1])


REGION = Region(DOCS / "agents.md", "per-client sections", "echomem/agent_clients.py",
                "agent_docs", sections, named_markers=False)
