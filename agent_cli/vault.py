"""EchoVault's Markdown vault, read and written: `<vault>/<project>/<YYYY-MM-DD>-session.md`,
one file per project and day, YAML front matter (project, sources, created, tags), then
`# <date> Session`, a `## <Category heading>` per category and a `### <title>` per note
with `**What:**`, `**Why:**`, `**Impact:**` lines and the details between `<details>` tags.

Reading (vault_reader.py) is forgiving (a vault may be years old or edited by hand): odd
front matter is a warning for that file, never a crash. Writing (vault_writer.py) adds two
entry lines EchoVault's own reader ignores, `**Tags:**` and `**Files:**`, because its files
keep only the day's union of tags and no related files, and a round trip through Echo Memory
should lose neither; and a comment with the version and save time of each entry, so that a
note's history (several entries with one project and title) reads back in its order. Text
the layout cannot hold as it is goes in as JSON on its line (vault_text.py).

Entries with the same project and title are one note and its history, oldest first: import
saves them in that order (the last is the note, the others its earlier versions), and
export writes a note's earlier versions back as entries of the days they were saved. This
module holds what both sides share: the note, what a read found, the category headings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NO_PROJECT = "_no-project"  # the folder for notes saved without a project
HEADINGS = {"decision": "Decisions", "pattern": "Patterns", "bug": "Bugs Fixed",
            "context": "Context", "learning": "Learnings"}


@dataclass
class VaultNote:
    """One note as memory_save takes it, and where it came from."""

    project: str
    title: str
    what: str
    why: str | None = None
    impact: str | None = None
    tags: list[str] = field(default_factory=list)
    category: str = "context"
    related_files: list[str] = field(default_factory=list)
    details: str | None = None
    where: str = ""
    date: str = ""
    notes: list[str] = field(default_factory=list)  # what the import changed, said once
    own_tags: bool = False  # a **Tags:** line of its own (not the file's union of tags)
    saved: str = ""  # when the server saved this version, from an exported vault
    order: int = 0  # the place it was read in

    def arguments(self) -> dict[str, Any]:
        """A whole snapshot: every field given, empty ones as empty, so that the server's
        merge rule (fields left out keep their value) never mixes two entries."""
        out: dict[str, Any] = {"title": self.title, "what": self.what,
                               "category": self.category, "why": self.why or "",
                               "impact": self.impact or "", "details": self.details or "",
                               "tags": list(self.tags),
                               "related_files": list(self.related_files)}
        if self.project != NO_PROJECT:
            out["project"] = self.project
        return out

    def key(self) -> tuple[str, str]:
        return (self.project, self.title)

    def when(self) -> tuple[str, int]:
        """Oldest first: the save time an export wrote, else the file's day; then reading
        order."""
        return (self.saved or self.date, self.order)


@dataclass
class Skipped:
    where: str
    title: str
    reason: str


@dataclass
class Vault:
    notes: list[VaultNote] = field(default_factory=list)  # every note and version, oldest first
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0


def default_vault() -> Path:
    return Path.home() / ".memory" / "vault"


def chains(notes: list[VaultNote]) -> list[list[VaultNote]]:
    """The notes grouped by project and title, each group oldest first: a note and the
    versions before it."""
    grouped: dict[tuple[str, str], list[VaultNote]] = {}
    for note in notes:
        grouped.setdefault(note.key(), []).append(note)
    return list(grouped.values())
