"""Regions of the user docs that a generator writes (the tool tables from the tool registry,
the per-client sections from the agent client formats), so a doc cannot drift from what
the product answers: their markers, bringing one up to date, and the one management
command shape (`--check` / `--write`) every such generator uses."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

DOCS = Path(__file__).resolve().parent.parent / "docs"


@dataclass(frozen=True)
class Region:
    doc: Path
    name: str  # what it holds ("tool list"), as its markers and messages name it
    source: str  # the file it is generated from, as its begin marker says
    command: str  # the `echo-memory manage` command that writes it
    body: Callable[[], str]
    # docs/agents.md's per-client region was marked before regions had names.
    named_markers: bool = True

    @property
    def label(self) -> str:
        return self.name if self.named_markers else "generated"

    @property
    def begin(self) -> str:
        named = f"{self.name} " if self.named_markers else ""
        return (f"<!-- BEGIN {named}generated from {self.source} by "
                f"`echo-memory manage {self.command} --write` -->")

    @property
    def end(self) -> str:
        return f"<!-- END {self.label} -->"

    def pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.begin) + r".*?" + re.escape(self.end), re.DOTALL)

    def text(self) -> str:
        return f"{self.begin}\n\n{self.body()}\n\n{self.end}"


class MarkersMissing(ValueError):
    pass


def render(region: Region, current: str) -> str:
    """The doc with the region brought up to date; the rest is left as written."""
    if not region.pattern().search(current):
        raise MarkersMissing(f"{region.doc.name} has no {region.label} region: put the lines "
                             f"{region.begin!r} and {region.end!r} where the {region.name} "
                             "belongs")
    return region.pattern().sub(lambda _: region.text(), current, count=1)


def stale(regions: Sequence[Region]) -> list[Region]:
    """The regions whose doc differs from what the generator writes."""
    return [r for r in regions
            if render(r, r.doc.read_text(encoding="utf-8")) != r.doc.read_text(encoding="utf-8")]


class RegionsCommand(BaseCommand):
    """`--check` (exit 1 when a doc differs from its generator) or `--write`, over the regions
    `regions()` returns (read when the command runs, so a test can point them elsewhere)."""

    def regions(self) -> Sequence[Region]:
        raise NotImplementedError

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--check", action="store_true",
                          help="exit 1 if a doc differs from what the generator writes")
        mode.add_argument("--write", action="store_true", help="rewrite the generated regions")

    def handle(self, *args, check: bool, write: bool, **options):
        differing = []
        for region in self.regions():
            if not region.doc.is_file():
                raise CommandError(f"{region.doc} is not here: run this in a checkout")
            current = region.doc.read_text(encoding="utf-8")
            try:
                wanted = render(region, current)
            except MarkersMissing as missing:
                raise CommandError(str(missing)) from None
            if wanted == current:
                continue
            differing.append(region)
            if write:
                region.doc.write_text(wanted, encoding="utf-8")
                self.stdout.write(f"Rewrote the {region.name} in {region.doc}.")
        if check and differing:
            raise CommandError("; ".join(
                f"{r.doc} differs from {r.source} ({r.name}): run `echo-memory manage "
                f"{r.command} --write` and commit the result" for r in differing))
        if not differing:
            self.stdout.write("The generated regions of the docs are up to date.")

