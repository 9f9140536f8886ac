"""Moving a vault's notes to the server (memory_save, one call each) and back (memory_context
to list, memory_details for each note)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.remote import Remote, ToolError
from agent_cli.vault import Skipped, VaultNote

CONTEXT_LIMIT = 100  # memory_context's largest page; it has no offset


@dataclass
class ImportSummary:
    counts: Counter = field(default_factory=Counter)  # created / updated / unchanged
    redacted: int = 0
    refused: list[Skipped] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


def import_notes(remote: Remote, notes: Iterable[VaultNote], memory: str | None,
                 step: Callable[[], None] = lambda: None) -> ImportSummary:
    """Save each note. The server updates a note with the same project and title and
    answers an identical save with created=updated=False, free: that is "unchanged"."""
    summary = ImportSummary()
    for note in notes:
        arguments = note.arguments()
        if memory:
            arguments["memory"] = memory
        try:
            reply = remote.call("memory_save", arguments)
        except ToolError as exc:  # one bad note does not stop the rest
            summary.refused.append(Skipped(note.where, note.title, f"refused: {exc}"))
        else:
            outcome = ("created" if reply.get("created") else
                       "updated" if reply.get("updated") else "unchanged")
            summary.counts[outcome] += 1
            summary.redacted += int(reply.get("redacted") or 0)
            summary.ids.append(str(reply.get("id")))
        step()
    return summary


@dataclass
class Listing:
    ids: list[str] = field(default_factory=list)
    missed: dict[str, int] = field(default_factory=dict)  # project -> notes not listed


def list_notes(remote: Remote, project: str | None, memory: str | None) -> Listing:
    """Every note id the tools can list: memory_context pages at most CONTEXT_LIMIT notes and
    has no offset, so a project with more is listed as far as its newest CONTEXT_LIMIT, and
    the rest are counted in `missed`."""
    listing = Listing()

    def context(name: str | None) -> dict[str, Any]:
        arguments: dict[str, Any] = {"limit": CONTEXT_LIMIT}
        if name is not None:
            arguments["project"] = name
        if memory:
            arguments["memory"] = memory
        return remote.call("memory_context", arguments)

    first = context(project)
    rows = list(first.get("memories") or [])
    if project is None and first.get("total", 0) > len(rows):
        projects = sorted({row.get("project") or "" for row in rows} - {""})
        rows = [row for row in rows if not row.get("project")]
        for name in projects:
            page = context(name)
            rows += page.get("memories") or []
            if page.get("total", 0) > len(page.get("memories") or []):
                listing.missed[name] = page["total"] - len(page["memories"])
        other = first["total"] - len(rows) - sum(listing.missed.values())
        if other > 0:  # projects none of whose notes are among the newest CONTEXT_LIMIT
            listing.missed["(projects not listed)"] = other
    elif first.get("total", 0) > len(rows):
        listing.missed[project or ""] = first["total"] - len(rows)
    seen: set[str] = set()
    for row in rows:
        if row["id"] not in seen:
            seen.add(row["id"])
            listing.ids.append(row["id"])
    return listing


def note_details(remote: Remote, note_id: str, memory: str | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"id": note_id}
    if memory:
        arguments["memory"] = memory
    reply = remote.call("memory_details", arguments)
    return reply.get("note") if isinstance(reply.get("note"), dict) else reply
