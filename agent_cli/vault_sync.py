"""Moving a vault's notes to the server (memory_save, one call each) and back (memory_context,
page after page, to list; memory_details for each note, with its history).

Entries with one project and title are a note and its history: import saves them oldest
first, so the newest is the note and the others its earlier versions. Importing the same
vault again changes nothing: a single entry identical to the note is answered unchanged by
the server for free, and a history is not sent again when the note already says what its
newest entry says (found with one memory_context listing per project that has one)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.remote import Remote, RemoteError, ToolError
from agent_cli.vault import NO_PROJECT, Skipped, VaultNote, chains

CONTEXT_LIMIT = 100  # memory_context's largest page
REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")  # what the server stores in a secret's place


@dataclass
class ImportSummary:
    counts: Counter = field(default_factory=Counter)  # created / updated / unchanged
    redacted: int = 0
    refused: list[Skipped] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


def import_notes(remote: Remote, notes: Iterable[VaultNote], memory: str | None,
                 step: Callable[[], None] = lambda: None) -> ImportSummary:
    """Save each note, a history oldest first. The server answers a save identical to the
    note with created=updated=False, free: that is "unchanged"."""
    summary = ImportSummary()
    titles: dict[str, dict[str, str]] = {}  # project -> title -> id, listed when needed
    for chain in chains(list(notes)):
        if len(chain) > 1 and _already_there(remote, chain[-1], memory, titles):
            summary.counts["unchanged"] += len(chain)
            for _ in chain:
                step()
            continue
        for note in chain:
            _save(remote, note, memory, summary)
            step()
    return summary


def _save(remote: Remote, note: VaultNote, memory: str | None, summary: ImportSummary) -> None:
    arguments = note.arguments()
    if memory:
        arguments["memory"] = memory
    try:
        reply = remote.call("memory_save", arguments)
    except ToolError as exc:  # one bad note does not stop the rest
        summary.refused.append(Skipped(note.where, note.title, f"refused: {exc}"))
        return
    outcome = ("created" if reply.get("created") else
               "updated" if reply.get("updated") else "unchanged")
    summary.counts[outcome] += 1
    summary.redacted += int(reply.get("redacted") or 0)
    summary.ids.append(str(reply.get("id")))


def _already_there(remote: Remote, newest: VaultNote, memory: str | None,
                   titles: dict[str, dict[str, str]]) -> bool:
    """Whether the server's note with this project and title says what `newest` says."""
    project = "" if newest.project == NO_PROJECT else newest.project
    if project not in titles:
        titles[project] = _titles(remote, project, memory)
    note_id = titles[project].get(newest.title)
    if note_id is None:
        return False
    stored = note_details(remote, note_id, memory)
    wanted = newest.arguments()
    return all(_matches(stored.get(name), wanted[name]) for name in
               ("what", "why", "impact", "details", "tags", "category", "related_files"))


def _matches(stored: Any, wanted: Any) -> bool:
    """Equal, where the server's [REDACTED:kind] stands for whatever secret was there."""
    if isinstance(wanted, list):
        stored = list(stored or [])
        return len(stored) == len(wanted) and all(map(_matches, stored, wanted))
    stored = stored or ""
    if stored == wanted:
        return True
    parts = REDACTED.split(stored)
    return len(parts) > 1 and re.fullmatch(".+?".join(map(re.escape, parts)), wanted,
                                           re.S) is not None


def _titles(remote: Remote, project: str, memory: str | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for row in _context_pages(remote, project or None, memory):
        if (row.get("project") or "") == project:
            found.setdefault(row["title"], row["id"])
    return found


def _context_pages(remote: Remote, project: str | None, memory: str | None,
                   page_size: int = CONTEXT_LIMIT) -> Iterable[dict[str, Any]]:
    """Every note row memory_context lists for the memory (or the project), newest first,
    page after page: each asks for the notes after the previous page's next_cursor."""
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
                yield row
        if "next_cursor" not in page and page.get("total", 0) > len(seen):
            raise RemoteError(f"the server lists only {len(seen)} of {page['total']} notes: it "
                              "predates memory_context paging (next_cursor); upgrade it, "
                              "then try again")
        cursor = page.get("next_cursor")
        if not cursor:
            return
        if not page.get("memories"):
            raise RemoteError("memory_context answered an empty page with a next_cursor; "
                              "the listing stops rather than loop: report this server bug")


def list_notes(remote: Remote, project: str | None, memory: str | None,
               page_size: int = CONTEXT_LIMIT) -> list[str]:
    """Every note id in the memory (or the project), newest first."""
    return [row["id"] for row in _context_pages(remote, project, memory, page_size)]


def note_details(remote: Remote, note_id: str, memory: str | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"id": note_id}
    if memory:
        arguments["memory"] = memory
    reply = remote.call("memory_details", arguments)
    return reply.get("note") if isinstance(reply.get("note"), dict) else reply
