"""Moving a vault's notes to the server (memory_save, one call each) and back (memory_context,
page after page, to list; memory_details for each note)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.remote import Remote, RemoteError, ToolError
from agent_cli.vault import Skipped, VaultNote

CONTEXT_LIMIT = 100  # memory_context's largest page


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


def list_notes(remote: Remote, project: str | None, memory: str | None,
               page_size: int = CONTEXT_LIMIT) -> list[str]:
    """Every note id in the memory (or the project), newest first: memory_context pages of
    `page_size`, each asking for the notes after the previous page's next_cursor."""
    ids: list[str] = []
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        arguments: dict[str, Any] = {"limit": page_size}
        for name, value in (("project", project), ("memory", memory), ("cursor", cursor)):
            if value:
                arguments[name] = value
        page = remote.call("memory_context", arguments)
        for row in page.get("memories") or []:
            if row["id"] not in seen:
                seen.add(row["id"])
                ids.append(row["id"])
        if "next_cursor" not in page and page.get("total", 0) > len(ids):
            raise RemoteError(f"the server lists only {len(ids)} of {page['total']} notes: it "
                              "predates memory_context paging (next_cursor); upgrade it, "
                              "then export again")
        cursor = page.get("next_cursor")
        if not cursor:
            return ids
        if not page.get("memories"):
            raise RemoteError("memory_context answered an empty page with a next_cursor; "
                              "the export stops rather than loop: report this server bug")


def note_details(remote: Remote, note_id: str, memory: str | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"id": note_id}
    if memory:
        arguments["memory"] = memory
    reply = remote.call("memory_details", arguments)
    return reply.get("note") if isinstance(reply.get("note"), dict) else reply
