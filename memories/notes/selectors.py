"""Reading notes back: hybrid search, a project's recent context, one note in full.

Each is paid inside its own transaction, one unit per note returned, cut to the units
left (and refused when none are), like query_memory.
"""

from __future__ import annotations

import base64
import re
import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from accounts.principal import Principal
from echomem.errors import NotFound, ValidationFailed
from memories.core import metering
from memories.core.scopes import partition_for
from memories.graph import selectors
from memories.graph.selectors import CANDIDATES_PER_RETRIEVER, embed_query, memory_for
from memories.models import Memory, Note
from memories.notes import ranking as note_ranking
from memories.search import candidates, freshness, note_words

CONTEXT_MESSAGE = (
    "Use memory_search for specific topics and memory_details for a note's full details. "
    "IMPORTANT: you MUST call memory_save before this session ends if you make any changes, "
    "decisions or discoveries.")
NOTE_RULE = "one unit per note returned"
# Columns the summaries read; details and vectors stay in the database.
SUMMARY_FIELDS = ("id", "title", "what", "why", "impact", "category", "tags", "project",
                  "created_at", "updated_at", "details")


def note_summary(note: Note) -> dict[str, Any]:
    """A note as search lists it (EchoVault's memory_search item)."""
    return {
        "id": str(note.pk), "title": note.title, "what": note.what, "why": note.why or None,
        "impact": note.impact or None, "category": note.category, "tags": note.tags,
        "project": note.project or None, "created_at": note.created_at,
        "updated_at": note.updated_at, "has_details": bool(note.details),
    }


def memory_search(principal: Principal, *, query: str, scope: str = "shared", limit: int = 5,
                  memory: str | None = None, project: str | None = None) -> dict[str, Any]:
    embedding = embed_query(query)
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    window = candidates.NoteFilter(project or None)
    # Read-your-writes: a note saved on the last call is searched with its vector.
    freshness.settle_notes(graph.pk, partition, notes=settings.ECHO_MEMORY_SEARCH_EMBED_NOTES,
                           seconds=settings.ECHO_MEMORY_QUERY_EMBED_SECONDS)
    pool = max(CANDIDATES_PER_RETRIEVER, limit * 2)
    with transaction.atomic(savepoint=False):
        text = candidates.text_candidates(graph.pk, partition, query, pool, window,
                                          corpus=candidates.NOTES)
        vector = candidates.vector_candidates(graph.pk, partition, embedding.result(), pool,
                                              window, corpus=candidates.NOTES)
        found_ids = list(dict.fromkeys(c.fact_id for c in [*vector, *text]))
        words = note_words.word_matches(graph.pk, partition, query, found_ids,
                                        selectors.get_embedder())
        hits = note_ranking.fuse_notes(vector, text, limit, words)
    found = len(hits)
    # Paid for before anything is read out for the reply, in a transaction of its own.
    with transaction.atomic():
        hits = hits[:metering.charge(principal, graph, "memory_search", [1] * found)]
    notes = Note.objects.only(*SUMMARY_FIELDS).in_bulk([hit.fact_id for hit in hits])
    results = [
        note_summary(notes[hit.fact_id]) | {
            "rank": hit.rank, "matched": hit.matched,
            "score": round(hit.cosine, 4) if hit.cosine is not None else None}
        for hit in hits
    ]
    return _read_reply(graph, scope, project, {"results": results, "count": len(results)},
                       len(results), found)


def memory_context(principal: Principal, *, scope: str = "shared", limit: int = 10,
                   cursor: str | None = None, memory: str | None = None,
                   project: str | None = None) -> dict[str, Any]:
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    notes = Note.objects.filter(memory=graph, partition=partition)
    if project:
        notes = notes.filter(project=project)
    page = notes
    if cursor is not None:
        updated_at, note_id = _position(cursor)
        page = notes.filter(Q(updated_at__lt=updated_at)
                            | Q(updated_at=updated_at, pk__lt=note_id))
    with transaction.atomic():
        total = notes.count()
        # One past the page says whether a next page exists without a second count.
        rows = list(page.only(*SUMMARY_FIELDS).order_by("-updated_at", "-pk")[:limit + 1])
        more = len(rows) > limit
        rows = rows[:limit]
        listed = len(rows)
        paid = metering.charge(principal, graph, "memory_context", [1] * listed)
        more, rows = more or paid < listed, rows[:paid]
    memories = [{"id": str(n.pk), "title": n.title, "category": n.category, "tags": n.tags,
                 "project": n.project or None, "date": n.updated_at.date().isoformat(),
                 "updated_at": n.updated_at, "has_details": bool(n.details)} for n in rows]
    reply = _read_reply(graph, scope, project, {
        "total": total, "showing": len(memories), "memories": memories,
        "next_cursor": _cursor_after(rows[-1]) if more and rows else None,
    }, len(memories), listed)
    reply["message"] = " ".join(filter(None, [reply.get("message"), CONTEXT_MESSAGE]))
    return reply


def _cursor_after(note: Note) -> str:
    """Where the next page starts, opaque to clients: the last note's (updated_at, id),
    the order memory_context lists in, so notes saved meanwhile do not shift the pages."""
    raw = f"{note.updated_at.isoformat()}|{note.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _position(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, note_id = raw.split("|")
        updated_at = datetime.fromisoformat(stamp)
        if updated_at.tzinfo is None:
            raise ValueError("naive time")
        return updated_at, uuid.UUID(note_id)
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors too
        raise ValidationFailed(f"cursor {cursor[:40]!r} is not one memory_context gave",
                               field="cursor",
                               fix="pass the next_cursor of the previous memory_context reply "
                                   "unchanged, or omit cursor to start from the newest notes"
                               ) from None


def memory_details(principal: Principal, *, id: str, scope: str = "shared",
                   memory: str | None = None) -> dict[str, Any]:
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    low, high = id_range(id)
    with transaction.atomic():
        found = list(Note.objects.filter(memory=graph, partition=partition, pk__gte=low,
                                         pk__lte=high).defer("embedding")[:3])
        if not found:
            raise NotFound(f"no note {id!r} in scope {scope!r} of graph "
                           f"{graph.name!r}", field="id",
                           fix="pass an id from memory_search or memory_context with the same "
                               "scope and memory")
        if len(found) > 1:
            listed = "; ".join(f"{n.pk} ({n.title})" for n in found[:2])
            raise ValidationFailed(f"the prefix {id!r} matches more than one note: "
                                   f"{listed}", field="id",
                                   fix="pass more characters of the id, or the full id")
        note = found[0]
        metering.charge(principal, graph, "memory_details", [1])
        versions = list(note.versions.order_by("-version"))
    return note_detail(note, versions) | {"memory": graph.name, "scope": scope,
                                          "units": 1, "cut_by_allowance": False}


def note_detail(note: Note, versions: list) -> dict[str, Any]:
    """A note in full, with what each earlier version said (newest first)."""
    return note_summary(note) | {
        "details": note.details or None, "related_files": note.related_files,
        "version": note.version, "written_by": {"tool": note.written_by_tool},
        "history": [{
            "version": v.version, "title": v.title, "what": v.what, "why": v.why or None,
            "impact": v.impact or None, "category": v.category, "tags": v.tags,
            "related_files": v.related_files, "details": v.details or None,
            "written_by": {"tool": v.written_by_tool}, "saved_at": v.saved_at,
            "replaced_at": v.replaced_at,
        } for v in versions],
    }


HEX = re.compile(r"[0-9a-f]{8,32}\Z")


def id_range(given: str, field: str = "id") -> tuple[uuid.UUID, uuid.UUID]:
    """The ids a full id or a prefix (8+ hex digits, dashes optional) can name, as a range
    the primary key index answers."""
    digits = given.strip().lower().replace("-", "")
    if not HEX.match(digits):
        raise ValidationFailed(f"{given!r} is not a note id or an id prefix", field=field,
                               fix="pass the id from memory_search or memory_context, or its "
                                   "first 8 or more characters")
    return (uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f")))


def _read_reply(memory: Memory, scope: str, project: str | None, body: dict[str, Any],
                returned: int, found: int) -> dict[str, Any]:
    reply = body | {"memory": memory.name, "scope": scope,
                    "project": project or None, "units": returned,
                    "cut_by_allowance": returned < found}
    if reply["cut_by_allowance"]:
        reply["message"] = metering.cut_short(returned, found, what="notes", rule=NOTE_RULE)
    return reply
