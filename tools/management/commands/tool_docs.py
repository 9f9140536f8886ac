from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from tools.docs import REGIONS, MarkersMissing, render


class Command(BaseCommand):
    help = ("Check (--check) or rewrite (--write) the tool lists in docs/agents.md and "
            "docs/api.md from the tool registry (tools/registry.py).")

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--check", action="store_true",
                          help="exit 1 if a doc differs from what the generator writes")
        mode.add_argument("--write", action="store_true", help="rewrite the generated regions")

    def handle(self, *args, check: bool, write: bool, **options):
        stale = []
        for region in REGIONS:
            if not region.doc.is_file():
                raise CommandError(f"{region.doc} is not here: run this in a checkout")
            current = region.doc.read_text(encoding="utf-8")
            try:
                wanted = render(region, current)
            except MarkersMissing as missing:
                raise CommandError(str(missing)) from None
            if wanted == current:
                continue
            stale.append(region)
            if write:
                region.doc.write_text(wanted, encoding="utf-8")
                self.stdout.write(f"Rewrote the {region.name} in {region.doc}.")
        if check and stale:
            raise CommandError("; ".join(f"{r.doc} has a stale {r.name}" for r in stale)
                               + ": run `echo-memory manage tool_docs --write` and commit it")
        if not stale:
            self.stdout.write("The tool lists in the docs are up to date.")
