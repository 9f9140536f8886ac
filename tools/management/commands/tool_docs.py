from __future__ import annotations

from echomem.doc_regions import command_over
from tools import docs

Command = command_over(
    lambda: docs.REGIONS,
    "Check (--check) or rewrite (--write) the tool lists in docs/agents.md and docs/api.md "
    "from the tool registry (tools/registry.py).")
