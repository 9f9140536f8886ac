from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from web.agent_docs import DOC, MarkersMissing, render


class Command(BaseCommand):
    help = ("Check (--check) or rewrite (--write) docs/agents.md's per-client sections from "
            "echomem/agent_clients.py, the source the dashboard's connect panel uses.")

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--check", action="store_true",
                          help="exit 1 if the doc differs from what the generator writes")
        mode.add_argument("--write", action="store_true", help="rewrite the generated region")

    def handle(self, *args, check: bool, write: bool, **options):
        if not DOC.is_file():
            raise CommandError(f"{DOC} is not here: run this in a checkout of the repository")
        current = DOC.read_text(encoding="utf-8")
        try:
            wanted = render(current)
        except MarkersMissing as missing:
            raise CommandError(str(missing)) from None
        if wanted == current:
            self.stdout.write(f"{DOC} is up to date.")
            return
        if check:
            raise CommandError(f"{DOC} differs from echomem/agent_clients.py: run "
                               "`echo-memory manage agent_docs --write` and commit the result")
        DOC.write_text(wanted, encoding="utf-8")
        self.stdout.write(f"Rewrote the generated sections of {DOC}.")
