"""Bulk load for bench/scale.py: entities, episodes and facts by COPY, indexes built after.

What the write path would store, minus what only the write path makes: no audit events
(bench/scale.py measures their size per fact from its real writes) and one episode per
20 facts. The word statistics are counted by the indexer's own `count_terms`.
"""

from __future__ import annotations

import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np

from bench import scale_corpus

EPISODE_FACTS = 20
CHUNK = 50_000
# One relation label per template, with the fact's number: every bulk fact is a live edge
# of its own (the key (source, target, relation) is unique), as in bench/corpus.py.
LABELS = ["worked_on", "moved_to", "prefers", "owns", "depends_on", "reported", "paired_with",
          "likes", "joined", "met", "retired", "likes_lunch"]


class _Half(bytes):
    """A halfvec already in PostgreSQL's binary form (dimension, 0, big-endian halves)."""


# The fact columns a bulk load writes by binary COPY, and their types in order (the
# embedding's is the halfvec type's oid, known once registered on the connection).
FACT_COPY_COLUMNS = ("id", "memory_id", "partition", "source_id", "target_id",
                     "relation_type", "fact", "confidence", "session_id", "project",
                     "episode_id", "position", "written_by_holder_id", "written_by_tool",
                     "written_by_key_id", "created_at", "search_text", "embedding")


def fact_copy_types(halfvec) -> list:
    return ["uuid", "int8", "text", "uuid", "uuid", "text", "text", "text", "text", "text",
            "uuid", "int4", "int4", "text", "int8", "timestamptz", "text", halfvec]


def _register_halfvec(raw) -> int:
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    oid = raw.execute("SELECT 'halfvec'::regtype::oid").fetchone()[0]

    class HalfDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj):
            return obj

    raw.adapters.register_dumper(_Half, type("HalfDumper", (HalfDumper,), {"oid": oid}))
    return oid


def droppable_indexes(cursor, table: str) -> list[tuple[str, str]]:
    """(name, definition) of the table's indexes that back no constraint."""
    cursor.execute(
        "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x "
        "JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = %s::regclass "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid) "
        "ORDER BY i.relname", [table])
    return cursor.fetchall()


def load(*, memory_id: int, holder_id: int, key_id: int, facts: int, real: np.ndarray,
         real_facts: list[dict], vocabulary: scale_corpus.Vocabulary,
         entity_vectors: np.ndarray) -> dict:
    """Fill the memory's shared partition; returns timings (seconds) and counts."""
    from django.db import connection, transaction

    from memories.core.names import initials, normalize
    from memories.search import vector_params
    from memories.search.fact_text import search_text_for
    from memories.search.storing import count_terms

    timings: dict = {}
    with connection.cursor() as cursor:
        dropped = [(table, *index) for table in ("memories_entity", "memories_fact")
                   for index in droppable_indexes(cursor, table)]
        for _, name, _ in dropped:
            cursor.execute(f'DROP INDEX "{name}"')
    started = time.perf_counter()
    names = sorted(vocabulary.entities)
    vector_of = dict(zip(names, entity_vectors, strict=True))
    entity_ids = {name: uuid.uuid4() for name in names}
    epoch = datetime.now(UTC) - timedelta(days=365)
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(names), 1000):
            part = names[start:start + 1000]
            cursor.execute(
                "INSERT INTO memories_entity (id, memory_id, partition, name, normalized_name, "
                "initials, type, name_embedding, created_at) SELECT v.id, %s, 'shared', v.name, "
                "v.norm, v.initials, v.type, v.vec, %s FROM unnest(%s::uuid[], "
                "%s::text[], %s::text[], %s::text[], %s::text[], %s::vector[]) "
                "AS v(id, name, norm, initials, type, vec)",
                [memory_id, epoch, [entity_ids[n] for n in part], part,
                 [normalize(n) for n in part], [initials(n) for n in part],
                 [vocabulary.entities[n] for n in part],
                 [vector_params.vector(vector_of[n]) for n in part]])
    timings["entities"] = time.perf_counter() - started

    raw = connection.connection
    halfvec = _register_halfvec(raw)
    columns, types = FACT_COPY_COLUMNS, fact_copy_types(halfvec)
    rng = random.Random(29)
    header = np.array([len(real[0]), 0], dtype=">u2").tobytes()
    step = timedelta(days=365) / max(facts, 1)
    started = time.perf_counter()
    for chunk_start in range(0, facts, CHUNK):
        count = min(CHUNK, facts - chunk_start)
        vectors = scale_corpus.mixed_vectors(real, chunk_start, count, seed=31).astype(">f2")
        episodes = [uuid.uuid4() for _ in range(0, count, EPISODE_FACTS)]
        with transaction.atomic(), connection.cursor() as cursor:
            # Consistent by construction: skip the per-row foreign-key triggers (5 a row).
            cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute(
                "INSERT INTO memories_episode (id, memory_id, partition, session_id, project, "
                "holder_id, tool, key_id, created_at) SELECT e, %s, 'shared', '', '', %s, "
                "'bench', %s, %s FROM unnest(%s::uuid[]) AS e",
                [memory_id, holder_id, key_id, epoch + step * chunk_start, episodes])
            with cursor.cursor.copy(
                    f"COPY memories_fact ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(types)
                for offset in range(count):
                    i = chunk_start + offset
                    base = real_facts[i % len(real_facts)]
                    text = scale_corpus.fill(base["template"], rng)
                    copy.write_row((
                        uuid.uuid4(), memory_id, "shared", entity_ids[base["source"]],
                        entity_ids[base["target"]], f"{LABELS[base['shape']]}_{i}", text,
                        "extracted", f"bulk/{i // EPISODE_FACTS}", "",
                        episodes[offset // EPISODE_FACTS], offset % EPISODE_FACTS, holder_id,
                        "bench", key_id, epoch + step * i,
                        search_text_for(text, base["source"], base["target"]),
                        _Half(header + vectors[offset].tobytes())))
        print(f"  copied {chunk_start + count} facts "
              f"({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    timings["copy"] = time.perf_counter() - started

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM memories_fact WHERE memory_id = %s", [memory_id])
        ids = [row[0] for row in cursor.fetchall()]
        for start in range(0, len(ids), CHUNK):
            with transaction.atomic():
                count_terms(cursor, ids[start:start + CHUNK])
    timings["word_statistics"] = time.perf_counter() - started

    started = time.perf_counter()
    with connection.cursor() as cursor:
        # Hint bits and the visibility map set once, before there are indexes to visit.
        cursor.execute("VACUUM (ANALYZE) memories_fact")
        cursor.execute("VACUUM (ANALYZE) memories_episode")
        cursor.execute("VACUUM (ANALYZE) memories_termstat")
        cursor.execute("VACUUM (ANALYZE) memories_entity")
    timings["vacuum"] = time.perf_counter() - started

    timings["indexes"] = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '4GB'; "
                       "SET max_parallel_maintenance_workers = 2")
        # The HNSW graph last: every other index is built while it has the cores.
        for _, name, definition in sorted(dropped, key=lambda d: d[1] == "fact_embedding"):
            started = time.perf_counter()
            cursor.execute(definition)
            timings["indexes"][name] = time.perf_counter() - started
            print(f"  index {name} built in {timings['indexes'][name]:.0f}s", file=sys.stderr)
        cursor.execute("ANALYZE memories_fact")
    return timings


def sizes() -> list[tuple[str, str, int, int]]:
    """(table, relation, bytes, rows) for the engine's tables and each of their indexes."""
    from django.db import connection

    out = []
    with connection.cursor() as cursor:
        for table in ("memories_fact", "memories_entity", "memories_episode",
                      "memories_termstat", "memories_corpusstat", "memories_auditevent"):
            cursor.execute(f"SELECT count(*) FROM {table}")
            rows = cursor.fetchone()[0]
            cursor.execute(
                "SELECT pg_table_size(%s::regclass)", [table])
            heap = cursor.fetchone()[0]
            out.append((table, "table (heap + TOAST)", heap, rows))
            cursor.execute(
                "SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x "
                "JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = %s::regclass "
                "ORDER BY 2 DESC", [table])
            out += [(table, name, size, rows) for name, size in cursor.fetchall()]
    return out
