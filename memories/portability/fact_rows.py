"""Storing a file's facts: their endpoints and episode resolved to local rows, live edges
met against the memory's own (memories/portability/writing.py says the rule), history links
(`superseded_by`) set once every fact is in, and word statistics counted for facts stored
with their vectors (the indexer embeds and counts the others after commit)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.utils import timezone

from echomem import bulk
from memories.core import limits
from memories.import_records import ImportedRecord
from memories.models import Fact
from memories.portability.lines import FactLine
from memories.portability.reading import ImportRefused
from memories.portability.writing import Known, Numbered, Tally, Target, named
from memories.search import storing, vector_params
from memories.search.fact_text import search_text_for

EdgeKey = tuple[str, uuid.UUID, uuid.UUID, str]


@dataclass
class History:
    """Facts created so far, and what each was replaced by in the file (linked at the end)."""

    links: list[tuple[int, uuid.UUID, uuid.UUID]] = field(default_factory=list)
    waiting: list[uuid.UUID] = field(default_factory=list)  # to be embedded by the indexer
    created: set[uuid.UUID] = field(default_factory=set)
    replaced: int = 0  # copies of an earlier import replaced by the source's newer version


def store_facts(target: Target, known: Known, tally: Tally, history: History,
                batch: Numbered) -> None:
    found = target.match("fact", batch)
    wanted: list[tuple[int, FactLine, dict]] = []
    for line, record in batch:
        record: FactLine
        source = named(line, "fact", "source", record.source, known.entities)
        target_node = named(line, "fact", "target", record.target, known.entities)
        episode = named(line, "fact", "episode", record.episode, known.episodes)
        partition = target.partition(record)
        if record.id in found.skipped:
            known.facts[record.id] = None
            tally.skip("fact", line, found.skipped[record.id])
        elif record.id in found.present:
            known.facts[record.id] = found.present[record.id]
            known.fact_partitions[found.present[record.id]] = partition
            tally.present["fact"] += 1
        elif source is None or target_node is None or episode is None:
            known.facts[record.id] = None
            tally.skip("fact", line, "an entity or the episode it names was skipped")
        else:
            for name, node in (("source", source), ("target", target_node)):
                if node[2] != partition:
                    raise ImportRefused(line, f"fact.{name} names an entity of another "
                                        "partition", field=f"fact.{name}",
                                        fix="a fact's entities share its scope; export again")
            wanted.append((line, record, _row(target, record, partition, source, target_node,
                                              episode)))
    live = _live_edges(target, [row for _, record, row in wanted
                                if record.superseded_at is None])
    ours = _copies_of_this_source(target, [edge[0] for edge in live.values()])
    replaced: list[tuple[uuid.UUID, uuid.UUID, object]] = []
    rows = []
    for line, record, row in wanted:
        key = (row["partition"], row["source_id"], row["target_id"], row["relation_type"])
        here = live.get(key) if record.superseded_at is None else None
        if here is not None and _same(here, row):
            known.facts[record.id] = here[0]
            known.fact_partitions[here[0]] = row["partition"]
            tally.present["fact"] += 1
            continue
        if here is not None and here[0] in ours and here[1] <= row["created_at"]:
            # A later export of the source: it replaced its version since the earlier
            # import, and so does this one (the slot is freed before the row goes in).
            replaced.append((here[0], row["id"], row["created_at"]))
        elif here is not None:  # kept as history: the memory's own live fact stays live
            row["superseded_at"] = max(here[1], row["created_at"])
        elif record.superseded_at is None:
            live[key] = (row["id"], row["created_at"], row["fact"], row["confidence"],
                         row["causal_hint"], row["valid_at"], row["invalid_at"])
        known.facts[record.id] = row["id"]
        known.fact_partitions[row["id"]] = row["partition"]
        if record.superseded_by is not None:
            history.links.append((line, row["id"], record.superseded_by))
        rows.append(row)
    if replaced:
        # superseded_by's foreign key is checked at commit, so it may name the row to come.
        bulk.execute("UPDATE memories_fact f SET superseded_at = v.at, superseded_by_id = v.new "
                     "FROM unnest(%s::uuid[], %s::uuid[], %s::timestamptz[]) AS v(old, new, at) "
                     "WHERE f.id = v.old", [list(column) for column in zip(*replaced,
                                                                          strict=True)])
        history.replaced += len(replaced)
    _insert(rows, history)
    tally.created["fact"] += len(rows)
    target.remember("fact", [(record.id, known.facts[record.id]) for _, record, _ in wanted])


def _row(target: Target, record: FactLine, partition: str, source: tuple, target_node: tuple,
         episode: uuid.UUID) -> dict:
    text = target.clean(record.fact, limits.FACT_CHARS)
    vector = (vector_params.halfvec(np.asarray(record.vector, np.float32))
              if target.use_vectors and record.vector else None)
    return {
        "id": uuid.uuid4(), "memory_id": target.memory.pk, "partition": partition,
        "source_id": source[0], "target_id": target_node[0],
        "relation_type": target.clean(record.relation_type, limits.RELATION_CHARS),
        "fact": text, "confidence": record.confidence, "causal_hint": record.causal_hint,
        "session_id": target.clean(record.session_id, limits.LABEL_CHARS),
        "project": target.clean(record.project, limits.LABEL_CHARS),
        "episode_id": episode, "position": record.position, "written_by_holder_id": None,
        "written_by_tool": record.written_by_tool, "written_by_key_id": None,
        "created_at": record.created_at, "superseded_at": record.superseded_at,
        "valid_at": record.valid_at, "invalid_at": record.invalid_at,
        "search_text": search_text_for(text, source[1], target_node[1]), "embedding": vector,
    }


def _live_edges(target: Target, rows: list[dict]) -> dict[EdgeKey, tuple]:
    """The memory's live facts on these rows' edge keys, one probe per key."""
    if not rows:
        return {}
    found = bulk.execute(
        "SELECT f.partition, f.source_id, f.target_id, f.relation_type, f.id, f.created_at, "
        "f.fact, f.confidence, f.causal_hint, f.valid_at, f.invalid_at "
        "FROM unnest(%s::text[], %s::uuid[], %s::uuid[], %s::text[]) AS k(p, s, t, r) "
        "CROSS JOIN LATERAL (SELECT * FROM memories_fact WHERE memory_id = %s "
        "AND partition = k.p AND source_id = k.s AND target_id = k.t AND relation_type = k.r "
        "AND superseded_at IS NULL LIMIT 1) f",
        [[r["partition"] for r in rows], [r["source_id"] for r in rows],
         [r["target_id"] for r in rows], [r["relation_type"] for r in rows],
         target.memory.pk])
    return {tuple(row[:4]): tuple(row[4:]) for row in found}


def _copies_of_this_source(target: Target, ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these facts an earlier import from the same source box made or matched."""
    if not ids:
        return set()
    return set(ImportedRecord.objects.filter(
        memory_id=target.memory.pk, kind="fact", source_box=target.source_box,
        local_id__in=ids).values_list("local_id", flat=True))


def _same(here: tuple, row: dict) -> bool:
    return here[2:] == (row["fact"], row["confidence"], row["causal_hint"], row["valid_at"],
                        row["invalid_at"])


def _insert(rows: list[dict], history: History) -> None:
    """Store the rows; a live one whose edge an agent made live meanwhile (the partial unique
    index says so) is stored as history instead, as if it had met that edge here."""
    if not rows:
        return
    live = [row for row in rows if row["superseded_at"] is None]
    if live:
        sql, params = bulk.insert_statement(Fact, live)
        stored = {found[0] for found in bulk.execute(
            f"{sql} ON CONFLICT (memory_id, partition, source_id, target_id, relation_type) "
            "WHERE superseded_at IS NULL DO NOTHING RETURNING id", params)}
        raced = [row for row in live if row["id"] not in stored]
        for row in raced:
            row["superseded_at"] = max(timezone.now(), row["created_at"])
        if raced:
            bulk.execute(*bulk.insert_statement(Fact, raced))
    tried = {row["id"] for row in live}
    history_rows = [row for row in rows if row["id"] not in tried]
    if history_rows:
        bulk.execute(*bulk.insert_statement(Fact, history_rows))
    history.created.update(row["id"] for row in rows)
    vectors = [row["id"] for row in rows if row["embedding"] is not None]
    history.waiting.extend(row["id"] for row in rows if row["embedding"] is None)
    with connection.cursor() as cursor:
        # Read from the table: a batch may hold part of an episode, the rest in another.
        storing.fill_context_vectors(cursor, sorted({row["episode_id"] for row in rows}))
        if vectors:
            storing.count_terms(cursor, vectors)


def link_history(known: Known, history: History) -> int:
    """Set `superseded_by` on created facts whose successor this import created too (a
    successor matched to the memory's own fact leaves the link empty, the time kept)."""
    olds, news, taken = [], [], set()
    for line, old, successor in history.links:
        local = named(line, "fact", "superseded_by", successor, known.facts)
        if local is None or local not in history.created:
            continue
        if local == old or local in taken:
            raise ImportRefused(line, "fact.superseded_by names a fact that replaces "
                                "another already (or itself)", field="fact.superseded_by",
                                fix="each fact is replaced by at most one other; export again")
        taken.add(local)
        olds.append(old)
        news.append(local)
    if olds:
        bulk.execute("UPDATE memories_fact f SET superseded_by_id = v.new FROM "
                     "unnest(%s::uuid[], %s::uuid[]) AS v(old, new) WHERE f.id = v.old",
                     [olds, news])
    return len(olds) + history.replaced

