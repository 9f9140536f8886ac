from __future__ import annotations

from echomem.doc_regions import RegionsCommand
from web import agent_docs


class Command(RegionsCommand):
    help = ("Check (--check) or rewrite (--write) docs/agents.md's per-client sections from "
            "echomem/agent_clients.py, the source the dashboard's connect panel uses.")

    def regions(self):
        return [agent_docs.REGION]
