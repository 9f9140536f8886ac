"""Notes as a person reads them in the explorer: a partition's notes, newest first (or
found by words), and one note with its history. Browsing is free, like the fact list."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F

from accounts.principal import Principal
from echomem.errors import NotFound
from memories.core.scopes import SHARED, visible_to_person
from memories.graph.browse import ScopeChoice, scope_choices
from memories.models import TEXT_SEARCH_CONFIG, Memory, Note
from memories.notes.selectors import SUMMARY_FIELDS, note_detail, note_summary

NOTES_PER_PAGE = 50


def note_scope_choices(principal: Principal, memory: Memory) -> list[ScopeChoice]:
    """`shared`, then the solo partition of each of the person's tools that wrote notes here."""
    return scope_choices(principal, memory, written=Note)


def note_list(memory: Memory, partition: str, *, words: str = "",
              project: str = "") -> list[dict[str, Any]]:
    """Up to NOTES_PER_PAGE notes of the partition: matching `words` best first, else the
    most recently saved first."""
    notes = Note.objects.filter(memory_id=memory.pk, partition=partition).only(*SUMMARY_FIELDS)
    if project:
        notes = notes.filter(project=project)
    if words:
        query = SearchQuery(words, config=TEXT_SEARCH_CONFIG, search_type="websearch")
        notes = (notes.filter(search_vector=query)
                 .annotate(rank=SearchRank(F("search_vector"), query))
                 .order_by("-rank", "-updated_at"))
    else:
        notes = notes.order_by("-updated_at")
    return [note_summary(note) for note in notes[:NOTES_PER_PAGE]]


def note_projects(memory: Memory, partition: str) -> list[str]:
    return list(Note.objects.filter(memory_id=memory.pk, partition=partition)
                .exclude(project="").values_list("project", flat=True)
                .distinct().order_by("project"))


def note_page(principal: Principal, memory: Memory, note_id: uuid.UUID) -> dict[str, Any]:
    """One note the person may read (shared, or a solo note of their own), in full."""
    note = (Note.objects.filter(visible_to_person(principal), pk=note_id, memory_id=memory.pk)
            .defer("embedding", "search_text").first())
    if note is None:
        raise NotFound(f"no note {note_id} in memory {memory.name!r}", field="note",
                       fix="open the note from the memory's notes list")
    detail = note_detail(note, list(note.versions.order_by("-version")))
    return detail | {"scope": "shared" if note.partition == SHARED else "solo",
                     "partition": note.partition}
