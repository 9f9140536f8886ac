"""Exporting a memory (or every memory of an account) as the lines of the export format.

Streamed: each kind is read through a server-side cursor a page at a time, inside one
REPEATABLE READ transaction, so the file is one consistent snapshot (no fact names an
entity written after the entities were read) and memory stays flat however large the
memory.

What is exported is what the principal's person sees (memories/core/scopes.py): the shared
partition and their own solo partitions, never another holder's solo facts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.account_events import account_event
from accounts.principal import Principal
from memories.core.scopes import SHARED, visible_to_person
from memories.graph.selectors import memory_for, memory_list
from memories.import_records import this_box
from memories.models import Entity, Episode, Fact, Memory, Note, NoteVersion, RecallSave
from memories.portability.lines import FORMAT, KINDS, VERSION
from memories.search.reembedding import model_fingerprint

PAGE = 1000
MODEL_NAME = "all-MiniLM-L6-v2"
SCOPES = "shared and the exporter's own solo partitions"


def embedding_model() -> str:
    """What made this box's vectors: the model's files and the context a fact is embedded
    with; a file's vectors are used on import only when this matches exactly."""
    return (f"{MODEL_NAME}:sha256-{model_fingerprint()[:16]}"
            f":context-{settings.ECHO_MEMORY_EMBED_CONTEXT}")


def export_memory(*, principal: Principal, memory: str,
                  include_vectors: bool = False) -> Iterator[str]:
    """The memory's lines (each ending in a newline), header first and trailer last.

    The memory is looked up (NotFound for another account's) and the export audited
    (`memory.exported`) when this is called, before the first line is read."""
    graph = memory_for(principal, memory)
    with transaction.atomic():
        full = Memory.objects.only("name", "description", "created_at").get(pk=graph.pk)
        header = {
            "kind": "header", "format": FORMAT, "version": VERSION,
            "exported_at": timezone.now(), "source_box": this_box(),
            "memory": {"name": full.name, "description": full.description,
                       "created_at": full.created_at, "source_id": full.pk},
            "embedding_model": embedding_model(), "vectors": include_vectors,
            "scopes": SCOPES,
        }
        account_event(account_id=principal.account_id, actor_id=principal.holder_id,
                      action="memory.exported", object_id=graph.pk, memory=graph,
                      tool=principal.tool, key_id=principal.key_id,
                      after={"name": graph.name, "search_data": include_vectors,
                             "format_version": VERSION})
    return _lines(principal, graph, header)


def export_account(*, principal: Principal, include_vectors: bool = False) -> Iterator[str]:
    """Every memory of the account, one complete export after another (a header starts each
    memory's lines, a trailer ends them): for a data-portability request."""
    names = [graph.name for graph in memory_list(principal)]
    return (line for name in names
            for line in export_memory(principal=principal, memory=name,
                                      include_vectors=include_vectors))


def _lines(principal: Principal, graph: Memory, header: dict[str, Any]) -> Iterator[str]:
    fresh = not connection.in_atomic_block
    with transaction.atomic():
        if fresh:
            # One snapshot for every page below (the transaction's first statement).
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield _dump(header)
        counts = dict.fromkeys(KINDS, 0)
        for kind, rows in _records(principal, graph, header["vectors"]):
            for row in rows:
                counts[kind] += 1
                yield _dump(row)
        yield _dump({"kind": "trailer", "records": sum(counts.values()), "counts": counts})


def _records(principal: Principal, graph: Memory, vectors: bool):
    seen = visible_to_person(principal)
    yield "episode", (_episode(row) for row in _pages(Episode.objects.filter(
        seen, memory_id=graph.pk), ["id", "partition", "session_id", "project", "tool",
                                    "created_at"]))
    yield "entity", (_entity(row, vectors) for row in _pages(Entity.objects.filter(
        seen, memory_id=graph.pk), ["id", "partition", "name", "type", "episode_id",
                                    "created_at", *(["name_embedding"] if vectors else [])]))
    yield "fact", (_fact(row, vectors) for row in _pages(Fact.objects.filter(
        seen, memory_id=graph.pk), [*FACT_FIELDS, *(["embedding"] if vectors else [])]))
    yield "note", _notes(seen, graph)
    yield "recall_save", (_recall_save(row) for row in _pages(RecallSave.objects.filter(
        seen, memory_id=graph.pk), ["id", "partition", "fact_id", "writer_tool",
                                    "reader_tool", "note", "session_id", "created_at"]))


FACT_FIELDS = ["id", "partition", "source_id", "target_id", "relation_type", "fact",
               "confidence", "causal_hint", "session_id", "project", "episode_id", "position",
               "written_by_tool", "created_at", "superseded_at", "superseded_by_id",
               "valid_at", "invalid_at"]
NOTE_FIELDS = ["title", "what", "why", "impact", "tags", "category", "related_files",
               "details", "written_by_tool"]


def _pages(queryset, fields: list[str]) -> Iterator[dict[str, Any]]:
    """Every row, read through one server-side cursor PAGE rows at a time: one scan of the
    memory's rows, bounded memory, in no particular order (the import needs none within a
    kind)."""
    return queryset.values(*fields).iterator(chunk_size=PAGE)


def _scope(partition: str) -> dict[str, Any]:
    if partition == SHARED:
        return {"scope": "shared", "solo_tool": None}
    return {"scope": "solo", "solo_tool": partition.split(":", 2)[2]}


def _episode(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "episode", "id": row["id"], **_scope(row["partition"]),
            "session_id": row["session_id"], "project": row["project"], "tool": row["tool"],
            "created_at": row["created_at"]}


def _entity(row: dict[str, Any], vectors: bool) -> dict[str, Any]:
    out = {"kind": "entity", "id": row["id"], **_scope(row["partition"]), "name": row["name"],
           "type": row["type"], "episode": row["episode_id"], "created_at": row["created_at"]}
    if vectors:
        out["name_vector"] = _floats(row["name_embedding"])
    return out


def _fact(row: dict[str, Any], vectors: bool) -> dict[str, Any]:
    out = {"kind": "fact", **{name.removesuffix("_id") if name not in ("id", "session_id")
                              else name: row[name] for name in FACT_FIELDS}}
    out |= _scope(row["partition"])
    del out["partition"]
    if vectors:
        out["vector"] = _floats(row["embedding"])
    return out


def _notes(seen, graph: Memory) -> Iterator[dict[str, Any]]:
    fields = ["id", "partition", "project", "version", "created_at", "updated_at", *NOTE_FIELDS]
    batch: list[dict[str, Any]] = []
    for row in _pages(Note.objects.filter(seen, memory_id=graph.pk), fields):
        batch.append(row)
        if len(batch) == PAGE:
            yield from _with_versions(batch)
            batch = []
    yield from _with_versions(batch)


def _with_versions(notes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The notes with their earlier versions, one query for the page."""
    versions: dict[Any, list[dict[str, Any]]] = {}
    for row in (NoteVersion.objects.filter(note_id__in=[n["id"] for n in notes])
                .order_by("note_id", "version")
                .values("note_id", "version", "saved_at", "replaced_at", *NOTE_FIELDS)):
        versions.setdefault(row.pop("note_id"), []).append(row)
    for note in notes:
        scope = _scope(note.pop("partition"))
        yield {"kind": "note", **note, **scope,
               "versions": versions.get(note["id"], [])}


def _recall_save(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "recall_save", "id": row["id"], **_scope(row.pop("partition")),
            "fact": row["fact_id"], "writer_tool": row["writer_tool"],
            "reader_tool": row["reader_tool"], "note": row["note"],
            "session_id": row["session_id"], "created_at": row["created_at"]}


def _floats(vector: Any) -> list[float] | None:
    if vector is None:
        return None
    values = vector.to_list() if hasattr(vector, "to_list") else vector
    return [float(value) for value in values]


def _default(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)  # UUIDs


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_default) + "\n"
