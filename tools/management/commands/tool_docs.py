from __future__ import annotations

from echomem.doc_regions import RegionsCommand
from tools import docs


class Command(RegionsCommand):
    help = ("Check (--check) or rewrite (--write) the tool lists in docs/agents.md and "
            "docs/api.md from the tool registry (tools/registry.py).")

    def regions(self):
        return docs.REGIONS
