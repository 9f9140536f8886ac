"""Storing a file's records in a memory, a batch of one kind at a time, inside the import's
one transaction. New rows get new ids; each remembers its source (ImportedRecord).

How a record meets what the memory already holds (docs/export-format.md, "Importing"):
- an entity with the same name in the same partition is that entity;
- a live fact whose edge key has a live fact here: the same text, confidence, hint and
  times is that fact; a newer one, where the live fact came from the same source box (a
  later export of the memory imported before), replaces it as the source's did; any other
  is kept as history (superseded at the later of the two record times), so an import
  never changes what the memory's own facts say now;
- a note with the same title in the same project: the same content is that note; other
  content is skipped (the memory's own note is kept), and the report says so;
- a record naming a record the import skipped (erased, forgotten) is skipped with it.
Text passes the account's redaction, cut to its column if a placeholder made it longer.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accounts.principal import Principal
from echomem import bulk
from memories.core import limits
from memories.core.names import initials, normalize
from memories.models import Entity, Episode, Memory, Note, NoteVersion, RecallSave
from memories.portability.lines import EntityLine, EpisodeLine, NoteLine, RecallSaveLine
from memories.portability.matching import Matched, match, remember
from memories.portability.reading import ImportRefused
from memories.search import vector_params
from memories.search.embeddings import get_embedder
from memories.search.note_text import note_search_text
from redaction.redactor import Redactor

Numbered = list[tuple[int, Any]]  # (line number, record)
MAX_REASONS = 20


@dataclass
class Tally:
    created: Counter = field(default_factory=Counter)
    present: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    reasons: list[str] = field(default_factory=list)

    def skip(self, kind: str, line: int, why: str) -> None:
        self.skipped[kind] += 1
        if len(self.reasons) < MAX_REASONS:
            self.reasons.append(f"line {line}: {kind} skipped: {why}")


@dataclass
class Target:
    """Where the records go and how they are made fit for it."""

    principal: Principal
    memory: Memory
    source_box: uuid.UUID
    same_box: bool
    use_vectors: bool
    embed_names: bool
    redactor: Redactor

    def partition(self, record: Any) -> str:
        if record.scope == "shared":
            return "shared"
        return f"solo:{self.principal.holder_id}:{record.solo_tool}"

    def clean(self, text: str, most: int) -> str:
        value, _ = self.redactor.text(text)
        return value[:most]

    def match(self, kind: str, batch: Numbered) -> Matched:
        return match(memory=self.memory, kind=kind, source_box=self.source_box,
                     same_box=self.same_box, ids=[record.id for _, record in batch])

    def remember(self, kind: str, pairs: list[tuple[uuid.UUID, uuid.UUID]]) -> None:
        remember(memory=self.memory, kind=kind, source_box=self.source_box, pairs=pairs)


@dataclass
class Known:
    """What later records may name: source id -> local id (None: skipped with its reason)."""

    episodes: dict[uuid.UUID, uuid.UUID | None] = field(default_factory=dict)
    # source id -> (local id, local name, partition), or None when skipped.
    entities: dict[uuid.UUID, tuple[uuid.UUID, str, str] | None] = field(default_factory=dict)
    facts: dict[uuid.UUID, uuid.UUID | None] = field(default_factory=dict)
    fact_partitions: dict[uuid.UUID, str] = field(default_factory=dict)


def named(line: int, kind: str, name: str, value: uuid.UUID, table: dict) -> Any:
    """The local side of a reference, refusing one to a record the file does not hold."""
    if value not in table:
        what = name if name in ("episode", "fact") else "entity"
        raise ImportRefused(line, f"{kind}.{name} names {what} {value}, which is not in the "
                            "file (or comes after this line)", field=f"{kind}.{name}",
                            fix="export the memory again: a file holds every record its "
                                "records name, each before the records naming it")
    return table[value]


def store_episodes(target: Target, known: Known, tally: Tally, batch: Numbered) -> None:
    found = target.match("episode", batch)
    rows, pairs = [], []
    for line, record in batch:
        record: EpisodeLine
        if record.id in found.skipped:
            known.episodes[record.id] = None
            tally.skip("episode", line, found.skipped[record.id])
        elif record.id in found.present:
            known.episodes[record.id] = found.present[record.id]
            tally.present["episode"] += 1
        else:
            local = uuid.uuid4()
            known.episodes[record.id] = local
            pairs.append((record.id, local))
            rows.append({
                "id": local, "memory_id": target.memory.pk, "partition": target.partition(record),
                "session_id": target.clean(record.session_id, limits.LABEL_CHARS),
                "project": target.clean(record.project, limits.LABEL_CHARS),
                "holder_id": None, "tool": record.tool, "key_id": None,
                "created_at": record.created_at})
    if rows:
        bulk.execute(*bulk.insert_statement(Episode, rows))
    tally.created["episode"] += len(rows)
    target.remember("episode", pairs)


def store_entities(target: Target, known: Known, tally: Tally, batch: Numbered) -> None:
    found = target.match("entity", batch)
    wanted: list[tuple[int, EntityLine, str, str]] = []
    for line, record in batch:
        if record.episode is not None:
            named(line, "entity", "episode", record.episode, known.episodes)
        if record.id in found.skipped:
            known.entities[record.id] = None
            tally.skip("entity", line, found.skipped[record.id])
        elif record.id in found.present:
            partition = target.partition(record)
            known.entities[record.id] = (found.present[record.id], "", partition)
            tally.present["entity"] += 1
        else:
            wanted.append((line, record, target.clean(record.name, limits.NAME_CHARS),
                           target.partition(record)))
    _fill_present_names(known, [record.id for _, record in batch
                                if record.id in found.present])
    existing = {(partition, name): pk for pk, partition, name in Entity.objects.filter(
        memory_id=target.memory.pk, partition__in={w[3] for w in wanted},
        name__in={w[2] for w in wanted}).values_list("pk", "partition", "name")}
    rows, pairs = [], []
    for _, record, name, partition in wanted:
        local = existing.get((partition, name))
        if local is not None:
            tally.present["entity"] += 1
        else:
            local = existing[(partition, name)] = uuid.uuid4()
            episode = known.episodes.get(record.episode) if record.episode else None
            rows.append((record, {
                "id": local, "memory_id": target.memory.pk, "partition": partition,
                "name": name, "normalized_name": normalize(name)[:limits.NAME_CHARS],
                "initials": initials(name)[:limits.INITIALS_CHARS],
                "type": target.clean(record.type, limits.TYPE_CHARS),
                "episode_id": episode, "created_at": record.created_at}))
        known.entities[record.id] = (local, name, partition)
        pairs.append((record.id, local))
    if rows:
        vectors = _name_vectors(target, [(record, row["name"]) for record, row in rows])
        raced = _insert_entities(target, [row | {"name_embedding": vector} for (_, row), vector
                                          in zip(rows, vectors, strict=True)])
        for source, entry in known.entities.items():
            if entry is not None and entry[0] in raced:
                known.entities[source] = (raced[entry[0]], entry[1], entry[2])
        pairs = [(source, raced.get(local, local)) for source, local in pairs]
        tally.present["entity"] += len(raced)
        tally.created["entity"] += len(rows) - len(raced)
    target.remember("entity", pairs)


def _insert_entities(target: Target, rows: list[dict]) -> dict[uuid.UUID, uuid.UUID]:
    """Store the rows; a name an agent wrote meanwhile is that agent's entity. Returns the
    planned ids that became existing entities, with those entities' ids."""
    sql, params = bulk.insert_statement(Entity, rows)
    stored = {found[0] for found in bulk.execute(
        f"{sql} ON CONFLICT (memory_id, partition, name) DO NOTHING RETURNING id", params)}
    raced = {(row["partition"], row["name"]): row["id"] for row in rows
             if row["id"] not in stored}
    if not raced:
        return {}
    existing = Entity.objects.filter(memory_id=target.memory.pk,
                                     partition__in={p for p, _ in raced},
                                     name__in={n for _, n in raced})
    return {raced[(e.partition, e.name)]: e.pk for e in existing
            if (e.partition, e.name) in raced}


def _fill_present_names(known: Known, sources: list[uuid.UUID]) -> None:
    """Entities found already present: their local names, which facts' search text uses."""
    locals_ = {known.entities[s][0]: s for s in sources}
    for pk, name, partition in Entity.objects.filter(pk__in=list(locals_)).values_list(
            "pk", "name", "partition"):
        known.entities[locals_[pk]] = (pk, name, partition)


def _name_vectors(target: Target, records: list[tuple[EntityLine, str]]) -> list[Any]:
    """Each new entity's name vector: the file's when usable, else embedded now (one batch),
    else (a dry run) none."""
    vectors: list[Any] = [vector_params.vector(np.asarray(record.name_vector, np.float32))
                          if target.use_vectors and record.name_vector else None
                          for record, _ in records]
    missing = [i for i, vector in enumerate(vectors) if vector is None]
    if missing and target.embed_names:
        embedded = get_embedder().embed([records[i][1] for i in missing])
        for i, vector in zip(missing, embedded, strict=True):
            vectors[i] = vector_params.vector(vector)
    return vectors


def store_notes(target: Target, known: Known, tally: Tally, batch: Numbered) -> None:
    found = target.match("note", batch)
    wanted = []
    for line, record in batch:
        record: NoteLine
        if record.id in found.skipped:
            tally.skip("note", line, found.skipped[record.id])
        elif record.id in found.present:
            tally.present["note"] += 1
        else:
            wanted.append((line, record, _note_fields(target, record), target.partition(record)))
    existing = {(n.partition, n.project, n.title): n for n in Note.objects.filter(
        memory_id=target.memory.pk, partition__in={w[3] for w in wanted},
        title__in={w[2]["title"] for w in wanted})}
    notes, versions, pairs = [], [], []
    for line, record, fields, partition in wanted:
        key = (partition, fields["project"], fields["title"])
        here = existing.get(key)
        if here is not None:
            if all(getattr(here, name) == value for name, value in fields.items()):
                tally.present["note"] += 1
                pairs.append((record.id, here.pk))
            else:
                tally.skip("note", line, f"a note titled {fields['title']!r} in project "
                           f"{fields['project']!r} says something else here; the memory's "
                           "own is kept")
            continue
        local = uuid.uuid4()
        existing[key] = Note(pk=local, **fields)
        pairs.append((record.id, local))
        notes.append({"id": local, "memory_id": target.memory.pk, "partition": partition,
                      **fields, "version": record.version, "written_by_holder_id": None,
                      "written_by_tool": record.written_by_tool, "written_by_key_id": None,
                      "created_at": record.created_at, "updated_at": record.updated_at,
                      "search_text": note_search_text(**fields)})
        for version in record.versions:
            content = _note_fields(target, version, project=fields["project"])
            del content["project"]
            versions.append(NoteVersion(note_id=local, memory_id=target.memory.pk,
                                        version=version.version, **content,
                                        written_by_tool=version.written_by_tool,
                                        saved_at=version.saved_at,
                                        replaced_at=version.replaced_at))
    if notes:
        Note.objects.bulk_create([Note(**row) for row in notes])
        NoteVersion.objects.bulk_create(versions, batch_size=1000)
    tally.created["note"] += len(notes)
    target.remember("note", pairs)


def _note_fields(target: Target, record: Any, project: str | None = None) -> dict[str, Any]:
    big = 10 ** 6
    return {
        "title": target.clean(record.title, limits.NOTE_TITLE_CHARS),
        "what": target.clean(record.what, big), "why": target.clean(record.why, big),
        "impact": target.clean(record.impact, big), "details": target.clean(record.details, big),
        "tags": [target.clean(tag, big) for tag in record.tags],
        "related_files": [target.clean(path, big) for path in record.related_files],
        "category": record.category,
        "project": project if project is not None
        else target.clean(record.project, limits.LABEL_CHARS),
    }


def store_recall_saves(target: Target, known: Known, tally: Tally, batch: Numbered) -> None:
    found = target.match("recall_save", batch)
    rows, pairs = [], []
    for line, record in batch:
        record: RecallSaveLine
        fact = named(line, "recall_save", "fact", record.fact, known.facts)
        if record.id in found.skipped:
            tally.skip("recall_save", line, found.skipped[record.id])
        elif record.id in found.present:
            tally.present["recall_save"] += 1
        elif fact is None:
            tally.skip("recall_save", line, "the fact it names was skipped")
        else:
            local = uuid.uuid4()
            pairs.append((record.id, local))
            rows.append({"id": local, "fact_id": fact, "memory_id": target.memory.pk,
                         "partition": known.fact_partitions.get(fact, target.partition(record)),
                         "writer_holder_id": None, "writer_tool": record.writer_tool,
                         "reader_holder_id": None, "reader_tool": record.reader_tool,
                         "reader_key_id": None,
                         "note": target.clean(record.note, 10 ** 6),
                         "session_id": target.clean(record.session_id, limits.LABEL_CHARS),
                         "created_at": record.created_at})
    if rows:
        bulk.execute(*bulk.insert_statement(RecallSave, rows))
    tally.created["recall_save"] += len(rows)
    target.remember("recall_save", pairs)
