"""Bulk load of bench/real_corpus.py's table for bench/scale_real.py: many memories, one
account, facts by COPY with their cached model vectors, indexes built after.

Fact i of the corpus gets the id UUID(int=i + 1), so the benchmark finds a fact's row in
the corpus (and its vector) from its id. Entities are each memory's documents and
collections, without name vectors (nothing a query reads; entity resolution on write
would embed them). One episode per 20 facts; no audit events (bench/scale.py measures
those from real writes).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import numpy as np

from bench.scale_load import (
    EPISODE_FACTS,
    FACT_COPY_COLUMNS,
    _Half,
    _register_halfvec,
    droppable_indexes,
    fact_copy_types,
)

CHUNK = 50_000


def fact_id(index: int) -> uuid.UUID:
    return uuid.UUID(int=index + 1)


def interleaved(rows: list[dict], seed: int = 53) -> np.ndarray:
    """The order facts are written in: the memories' writes interleaved at random, as many
    tenants' would be (so a memory's facts are spread over the heap, not side by side),
    each memory's own facts in their order."""
    rng = np.random.default_rng(seed)
    keys = np.empty(len(rows))
    by_memory: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_memory[row["m"]].append(i)
    for members in by_memory.values():
        keys[members] = np.sort(rng.random(len(members)))
    return np.argsort(keys, kind="stable")


def load(*, account_id: int, holder_id: int, key_id: int, rows: list[dict],
         vectors: np.ndarray) -> tuple[dict, dict[str, int]]:
    """Every row into its memory's shared partition, indexes dropped during the load and
    built again after; returns timings and each memory's id."""
    from django.db import connection, transaction

    from memories.core.names import initials, normalize
    from memories.graph.services import memory_create
    from memories.models import Memory
    from memories.search.storing import count_terms

    timings: dict = {}
    names = list(dict.fromkeys(r["m"] for r in rows))
    for name in names:
        memory_create(account_id=account_id, name=name)
    memory_ids = dict(Memory.objects.filter(account_id=account_id, name__in=names)
                      .values_list("name", "pk"))
    with connection.cursor() as cursor:
        dropped = [index for table in ("memories_entity", "memories_fact")
                   for index in droppable_indexes(cursor, table)]
        for name, _ in dropped:
            cursor.execute(f'DROP INDEX "{name}"')

    started = time.perf_counter()
    entities: dict[tuple[str, str], uuid.UUID] = {}
    for row in rows:
        for name in (row["s"], row["t"]):
            entities.setdefault((row["m"], name), uuid.uuid4())
    epoch = datetime.now(UTC) - timedelta(days=365)
    keys = list(entities)
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(keys), 5000):
            part = keys[start:start + 5000]
            cursor.execute(
                "INSERT INTO memories_entity (id, memory_id, partition, name, normalized_name, "
                "initials, type, created_at) SELECT v.id, v.memory, 'shared', v.name, v.norm, "
                "v.initials, 'document', %s FROM unnest(%s::uuid[], %s::int8[], %s::text[], "
                "%s::text[], %s::text[]) AS v(id, memory, name, norm, initials)",
                [epoch, [entities[k] for k in part], [memory_ids[m] for m, _ in part],
                 [n for _, n in part], [normalize(n) for _, n in part],
                 [initials(n) for _, n in part]])
    timings["entities"] = time.perf_counter() - started

    step = timedelta(days=365) / max(len(rows), 1)
    per_memory: dict[str, int] = defaultdict(int)
    started = time.perf_counter()
    order = interleaved(rows)
    for chunk_start in range(0, len(rows), CHUNK):
        chosen = order[chunk_start:chunk_start + CHUNK]
        with transaction.atomic(), connection.cursor() as cursor:
            write_facts(cursor, indexes=chosen, rows=[rows[i] for i in chosen],
                        vectors=vectors[chosen], memory_ids=memory_ids, entities=entities,
                        per_memory=per_memory, holder_id=holder_id, key_id=key_id,
                        created=[epoch + step * (chunk_start + k) for k in range(len(chosen))])
        print(f"  copied {chunk_start + len(chosen):,} facts "
              f"({time.perf_counter() - started:.0f}s)", file=sys.stderr, flush=True)
    timings["copy"] = time.perf_counter() - started

    started = time.perf_counter()
    with connection.cursor() as cursor:
        ids = [fact_id(i) for i in range(len(rows))]
        for start in range(0, len(ids), CHUNK):
            with transaction.atomic():
                count_terms(cursor, ids[start:start + CHUNK])
    timings["word_statistics"] = time.perf_counter() - started

    started = time.perf_counter()
    with connection.cursor() as cursor:
        for table in ("memories_fact", "memories_episode", "memories_termstat",
                      "memories_entity"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    timings["vacuum"] = time.perf_counter() - started

    timings.update(build_indexes(dropped))
    return timings, memory_ids


def write_facts(cursor, *, indexes, rows: list[dict], vectors: np.ndarray,
                memory_ids: dict[str, int], entities: dict[tuple[str, str], uuid.UUID],
                per_memory: dict[str, int], holder_id: int, key_id: int,
                created: list[datetime]) -> None:
    """One chunk by COPY, in the caller's transaction: rows[k] is fact `indexes[k]` (id
    fact_id), with vectors[k] (float16) and created[k]; one episode per EPISODE_FACTS of a
    memory's facts, counted on from `per_memory` (updated)."""
    from memories.search.fact_text import search_text_for

    # On the cursor: a cursor takes its adapters from the connection when it is made.
    halfvec = _register_halfvec(cursor.cursor)
    columns, types = FACT_COPY_COLUMNS, fact_copy_types(halfvec)
    header = np.array([vectors.shape[1], 0], dtype=">u2").tobytes()
    big_endian = vectors.astype(">f2")
    episodes: dict[tuple[str, int], uuid.UUID] = {}
    positions = []
    for row in rows:
        n = per_memory[row["m"]]
        per_memory[row["m"]] += 1
        positions.append(n)
        episodes.setdefault((row["m"], n // EPISODE_FACTS), uuid.uuid4())
    # Consistent by construction: skip the per-row foreign-key triggers.
    cursor.execute("SET LOCAL session_replication_role = replica")
    cursor.execute(
        "INSERT INTO memories_episode (id, memory_id, partition, session_id, project, "
        "holder_id, tool, key_id, created_at) SELECT e, m, 'shared', '', '', %s, "
        "'bench', %s, %s FROM unnest(%s::uuid[], %s::int8[]) AS v(e, m)",
        [holder_id, key_id, created[0], list(episodes.values()),
         [memory_ids[m] for m, _ in episodes]])
    with cursor.cursor.copy(
            f"COPY memories_fact ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(types)
        for k, row in enumerate(rows):
            i, n, memory = int(indexes[k]), positions[k], row["m"]
            copy.write_row((
                fact_id(i), memory_ids[memory], "shared", entities[(memory, row["s"])],
                entities[(memory, row["t"])], f"says_{n}", row["f"], "extracted",
                f"bulk/{n // EPISODE_FACTS}", "", episodes[(memory, n // EPISODE_FACTS)],
                n % EPISODE_FACTS, holder_id, "bench", key_id, created[k],
                search_text_for(row["f"], row["s"], row["t"]),
                _Half(header + big_endian[k].tobytes())))


def build_indexes(dropped: list[tuple[str, str]], maintenance_work_mem: str = "4GB") -> dict:
    """Build the (name, definition) indexes, the HNSW graph last (every other index is
    built while it has the cores); their times, and build_hnsw's figures as "hnsw"."""
    from django.db import connection

    timings: dict = {"indexes": {}}
    with connection.cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'; "
                       "SET max_parallel_maintenance_workers = 2")
        for name, definition in sorted(dropped, key=lambda d: d[0] == "fact_embedding"):
            if name == "fact_embedding":
                timings["hnsw"] = build_hnsw(definition, maintenance_work_mem)
                timings["indexes"][name] = timings["hnsw"]["seconds"]
                continue
            started = time.perf_counter()
            cursor.execute(definition)
            timings["indexes"][name] = time.perf_counter() - started
        cursor.execute("ANALYZE memories_fact")
    return timings


def hnsw_definition(m: int, ef_construction: int) -> str:
    return ("CREATE INDEX fact_embedding ON public.memories_fact USING hnsw "
            f"(embedding halfvec_cosine_ops) WITH (m = {m}, ef_construction = {ef_construction})")


def build_hnsw(definition: str, maintenance_work_mem: str = "4GB") -> dict:
    """Build the fact HNSW index by `definition`: its time, the database's processes' peak
    resident memory meanwhile (sampled each 0.5 s, shared buffers they touched included),
    the building backend's own peak, and the index's size."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS fact_embedding")
        cursor.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'; "
                       "SET max_parallel_maintenance_workers = 2")
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
        stop, peak = threading.Event(), [0]

        def sample() -> None:
            while not stop.wait(0.5):
                peak[0] = max(peak[0], _postgres_rss())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        cursor.execute(definition)
        seconds = time.perf_counter() - started
        stop.set()
        sampler.join()
        backend_peak = _vm_hwm(backend)
        cursor.execute("SELECT pg_relation_size('fact_embedding')")
        size = cursor.fetchone()[0]
    print(f"  HNSW built in {seconds:.0f}s", file=sys.stderr, flush=True)
    return {"seconds": seconds, "definition": definition, "peak_rss": peak[0],
            "backend_peak": backend_peak, "size": size,
            "maintenance_work_mem": maintenance_work_mem}


def _postgres_rss() -> int:
    """Resident bytes of every postgres process, summed (shared pages count in each)."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() != "postgres":
                    continue
            total += _status_kb(int(pid), "VmRSS") * 1024
        except OSError:
            continue
    return total


def _vm_hwm(pid: int) -> int:
    try:
        return _status_kb(pid, "VmHWM") * 1024
    except OSError:
        return 0


def _status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0
