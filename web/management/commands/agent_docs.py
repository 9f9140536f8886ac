from __future__ import annotations

from echomem.doc_regions import command_over
from web import agent_docs

Command = command_over(
    lambda: [agent_docs.REGION],
    "Check (--check) or rewrite (--write) docs/agents.md's per-client sections from "
    "echomem/agent_clients.py, the source the dashboard's connect panel uses.")
