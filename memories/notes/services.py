"""Saving a coding agent's note: stored (or updated with its history kept), paid for and
audited in one transaction. Its text comes redacted (tools.calling.call_tool).

The merge rule, when a note with this title exists in this project (the same for every
door and for `memory import`): a field the save gives replaces the stored one (an empty
string or list clears it); a field it leaves out (or sends as null) keeps its value; the
earlier text becomes a version in the note's history; the reply lists what changed and
what was kept. A save that changes nothing is free and makes no version."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.principal import Principal
from audit.chain import Change, record
from echomem import bulk
from memories.core import metering
from memories.core.scopes import partition_for
from memories.graph.selectors import memory_for
from memories.graph.services import hold_memory
from memories.models import Note, NoteVersion
from memories.search import indexing
from memories.search.note_text import note_search_text

KEY_FIELDS = ("title", "project")  # which note a save is about; never merged
MERGED_FIELDS = ("title", "what", "why", "impact", "tags", "category", "related_files",
                 "details", "project")


@dataclass(frozen=True)
class NoteFields:
    """A note's content as stored; what a version keeps and audit shows."""

    title: str
    what: str
    why: str
    impact: str
    tags: list[str]
    category: str
    related_files: list[str]
    details: str
    project: str

    @classmethod
    def of(cls, note: Note | NoteVersion, project: str) -> NoteFields:
        return cls(title=note.title, what=note.what, why=note.why, impact=note.impact,
                   tags=list(note.tags), category=note.category,
                   related_files=list(note.related_files), details=note.details,
                   project=project)

    def merged(self, given: set[str], stored: NoteFields | None) -> NoteFields:
        """These fields where the save gave them, the stored note's elsewhere."""
        if stored is None:
            return self
        return NoteFields(**{name: getattr(self if name in given or name in KEY_FIELDS
                                           else stored, name) for name in MERGED_FIELDS})

    def content(self) -> dict[str, Any]:
        """The columns a version copies (the project is the note's, never changed)."""
        out = asdict(self)
        del out["project"]
        return out


def memory_save(principal: Principal, *, title: str, what: str, scope: str = "shared",
                memory: str | None = None, why: str | None = None, impact: str | None = None,
                tags: list[str] | None = None, category: str = "context",
                related_files: list[str] | None = None, details: str | None = None,
                project: str | None = None, given: frozenset[str]) -> dict[str, Any]:
    """Create the note, or merge this save into the one with this title in this project
    (the merge rule above; its previous text becomes a NoteVersion). A save that changes
    nothing changes nothing and costs nothing."""
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    given_values = NoteFields(
        title=title, what=what, why=why or "", impact=impact or "", tags=list(tags or []),
        category=category, related_files=list(related_files or []), details=details or "",
        project=project or "")
    with transaction.atomic():
        hold_memory(graph)
        _lock_title(graph.pk, partition, given_values.project, given_values.title)
        note = (Note.objects.select_for_update()
                .filter(memory=graph, partition=partition, project=given_values.project,
                        title=given_values.title).first())
        before = NoteFields.of(note, note.project) if note is not None else None
        fields = given_values.merged(given, before)
        changed = before != fields
        if changed:
            note = _store(principal, graph, partition, note, fields)
            metering.charge(principal, graph, "memory_save", [1], whole=True)
            action = "note.created" if before is None else "note.updated"
            record(actor=principal, memory=graph, partition=partition,
                   session_id="", changes=[Change(
                       action, str(note.pk),
                       before=_snapshot(before, note.version - 1) if before else None,
                       after=_snapshot(fields, note.version))])
            transaction.on_commit(indexing.schedule)
    what_changed = changed_fields(before, fields)
    kept = [] if before is None else [name for name in MERGED_FIELDS
                                      if name not in given and name not in KEY_FIELDS
                                      and getattr(before, name) not in ("", [])]
    return {
        "id": str(note.pk), "title": note.title, "project": fields.project or None,
        "created": before is None, "updated": before is not None and changed,
        "version": note.version, "changed": what_changed, "kept": kept,
        "warnings": thin_warnings(fields),
        "memory": graph.name, "scope": scope, "units": int(changed),
        "message": _message(note, before, changed, what_changed, kept),
    }


def changed_fields(before: NoteFields | None, after: NoteFields) -> list[str]:
    """The fields whose stored value this save changed (on a new note: those it filled)."""
    return [name for name in MERGED_FIELDS if name not in KEY_FIELDS
            and getattr(after, name) != (getattr(before, name) if before else
                                         ([] if isinstance(getattr(after, name), list)
                                          else ""))]


def _message(note: Note, before: NoteFields | None, changed: bool, what_changed: list[str],
             kept: list[str]) -> str:
    if before is None:
        message = f"Saved note {note.pk}."
    elif changed:
        message = (f"Updated note {note.pk} (same title in this project): changed "
                   f"{', '.join(what_changed)}"
                   + (f"; kept {', '.join(kept)} (not given)" if kept else "")
                   + f". Version {note.version - 1} is kept in its history.")
    else:
        message = ("Already saved: the note with this title says exactly this"
                   + (f" (kept {', '.join(kept)}, not given)" if kept else "") + ".")
    return message


def _store(principal: Principal, memory, partition: str, note: Note | None,
           fields: NoteFields) -> Note:
    now = timezone.now()
    search_text = note_search_text(**asdict(fields))
    if note is None:
        return Note.objects.create(
            memory=memory, partition=partition, project=fields.project, **fields.content(),
            written_by_holder_id=principal.holder_id, written_by_tool=principal.tool,
            written_by_key_id=principal.key_id, created_at=now, updated_at=now,
            search_text=search_text)
    NoteVersion.objects.create(note=note, memory=memory, version=note.version,
                               **NoteFields.of(note, note.project).content(),
                               written_by_tool=note.written_by_tool, saved_at=note.updated_at,
                               replaced_at=now)
    for name, value in fields.content().items():
        setattr(note, name, value)
    note.version += 1
    note.written_by_holder_id = principal.holder_id
    note.written_by_tool = principal.tool
    note.written_by_key_id = principal.key_id
    note.updated_at = now
    note.search_text = search_text
    note.embedding = None  # the indexer embeds the new text
    note.words = None  # and lists its words
    note.save()
    return note


def _lock_title(memory_id: int, partition: str, project: str, title: str) -> None:
    """Two saves of one new title at once: the second waits and then updates the first's
    note, instead of failing on the unique constraint."""
    key = int.from_bytes(hashlib.blake2b(
        f"note\x1f{memory_id}\x1f{partition}\x1f{project}\x1f{title}".encode(),
        digest_size=8).digest(), "big", signed=True)
    bulk.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def _snapshot(fields: NoteFields, version: int) -> dict[str, Any]:
    return asdict(fields) | {"version": version}


# What makes a decision or a bug note worth reading later (EchoVault warns on the same).
OPTIONS_WORDS = ("option", "alternative", "instead", "considered", " over ", " vs", "rather")


def thin_warnings(fields: NoteFields) -> list[str]:
    """Warnings for notes a future agent could not act on; the note is saved regardless."""
    warnings = []
    if fields.category == "decision":
        if not fields.why:
            warnings.append("decision without why: add the reasoning (why this choice over "
                            "the others) so a future agent does not reopen it")
        text = f" {fields.what} {fields.why} {fields.details} ".lower()
        if not any(word in text for word in OPTIONS_WORDS):
            warnings.append("decision without the options considered: name what else was "
                            "weighed (in details: Options considered) and why it lost")
    elif fields.category == "bug":
        if not fields.why:
            warnings.append("bug without a root cause: add why it happened (in why)")
        if not fields.impact and not fields.details:
            warnings.append("bug without the fix: say what changed to fix it (in impact or "
                            "details), so the next agent can recognise it")
    return warnings
