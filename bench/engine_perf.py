"""Engine speed at 10k and 100k facts, each figure next to the raw SQL it stands on.

    .venv/bin/python bench/engine_perf.py [--sizes 10000 100000] [--queries 300]

- write: write_episode in batches of 20 facts (the whole service: validation,
  resolution, key locks, supersession check, audit chain), facts accepted per
  second from one writer (half of each size's facts) and from --writers concurrent
  writers (the other half); next to plain INSERTs of the same 20 rows in one
  transaction.
  Embedding trails behind writes (DESIGN.md), so it is measured on its own: the
  indexer's facts/s.
- query: query_memory p50/p95 in ms, including the query's embedding; next to
  the same SQL statements (captured from the service) replayed on a raw cursor.
Vectors of the synthetic facts are computed once with the real model and cached
in bench/.cache, so a rerun spends its time on what is measured.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import corpus
from bench.setup import bench_principal, fresh_instance, use_cached_embedder

BATCH = 20


class Checkpoint:
    """Saves computed vectors every few thousand facts, so a cut-short run keeps them."""

    def __init__(self, cached, every: int = 5120):
        self.cached, self.every, self.done = cached, every, 0

    def __call__(self, count: int) -> None:
        self.done += count
        if self.done % self.every < count:
            self.cached.save()
            print(f"  indexed {self.done}", file=sys.stderr)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def load_entities(principal, names: list[str]) -> None:
    from tools.calling import run_validated
    from tools.registry import TOOLS

    entities = [{"name": n, "type": "person"} for n in names]
    entities += [{"name": t, "type": "service"} for t in corpus.THINGS]
    for start in range(0, len(entities), 500):
        run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "memory": "perf", "assume_new": True,
            "entities": entities[start:start + 500]})


def write_batches(principal, facts: list[dict]) -> float:
    """Seconds to write `facts` through write_episode, BATCH at a time."""
    from tools.calling import run_validated
    from tools.registry import TOOLS

    started = time.perf_counter()
    for start in range(0, len(facts), BATCH):
        chunk = facts[start:start + BATCH]
        names = sorted({f["source"] for f in chunk} | {f["target"] for f in chunk})
        entities = [{"name": n, "type": "service" if n in corpus.THINGS else "person"}
                    for n in names]
        reply = run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "memory": "perf", "session_id": f"bench/{start}",
            "entities": entities, "facts": chunk})
        assert reply["stored"] and reply["units"] == len(chunk), reply
    return time.perf_counter() - started


def write_concurrently(principal, facts: list[dict], writers: int) -> float:
    """Seconds for `writers` threads, each on its own connection, to write `facts`."""
    import queue
    import threading

    from django.db import connection

    batches: queue.SimpleQueue = queue.SimpleQueue()
    for start in range(0, len(facts), BATCH * 10):
        batches.put(facts[start:start + BATCH * 10])
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            while True:
                try:
                    chunk = batches.get_nowait()
                except queue.Empty:
                    return
                write_batches(principal, chunk)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer) for _ in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return time.perf_counter() - started


def raw_write_batches(memory_id: int, facts: list[dict]) -> float:
    """The floor: the same rows as plain INSERTs, 20 per transaction, no service."""
    from django.db import connection, transaction

    from memories.models import Entity, Episode

    ids = dict(Entity.objects.filter(memory_id=memory_id).values_list("name", "id"))
    episode = Episode.objects.create(memory_id=memory_id, partition="shared", tool="raw")
    started = time.perf_counter()
    for start in range(0, len(facts), BATCH):
        rows = [(memory_id, ids[f["source"]], ids[f["target"]], "raw " + f["relation_type"],
                 f["fact"], episode.pk, f["fact"]) for f in facts[start:start + BATCH]]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO memories_fact (id, memory_id, partition, source_id, target_id, "
                "relation_type, fact, confidence, session_id, project, episode_id, position, "
                "written_by_tool, created_at, search_text) VALUES (gen_random_uuid(), %s, "
                "'raw', %s, %s, %s, %s, 'extracted', '', '', %s, 0, 'raw', now(), %s)", rows)
    elapsed = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_fact WHERE partition = 'raw'")
    return elapsed


def measure_queries(principal, questions: list[str]) -> dict[str, list[float]]:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from memories.graph import selectors

    service, raw, embed = [], [], []
    for question in questions:
        selectors._query_vector.cache_clear()
        args = {"scope": "shared", "memory": "perf", "query": question, "top_k": 10}
        started = time.perf_counter()
        selectors._query_vector(question)
        embed.append((time.perf_counter() - started) * 1000)
        selectors._query_vector.cache_clear()
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            result = selectors.query_memory(principal, **args)
            service.append((time.perf_counter() - started) * 1000)
        assert result["facts"], question
        statements = [q["sql"] for q in captured.captured_queries]
        # In one transaction, as the service runs them (its SET LOCALs need one).
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()
            for sql in statements:
                cursor.execute(sql)
                if cursor.description:
                    cursor.fetchall()
            raw.append((time.perf_counter() - started) * 1000)
    return {"service": service, "raw": raw, "embed": embed}


def split_settings(sql: str) -> tuple[str, str]:
    """A captured statement's leading SET LOCALs (the searches send theirs in the same
    simple query) and the statement itself, to run or EXPLAIN apart."""
    settings = []
    while sql.startswith("SET LOCAL "):
        setting, sql = sql.split("; ", 1)
        settings.append(setting)
    return "; ".join(settings), sql


def explain_hot_queries(principal, question: str) -> str:
    """EXPLAIN ANALYZE of the statements the services sent: recall and name resolution."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memories.graph import selectors
    from memories.graph.inputs import EntityIn
    from memories.graph.resolution import resolve
    from tools.calling import run_validated
    from tools.registry import TOOLS

    with CaptureQueriesContext(connection) as captured:
        run_validated(principal, TOOLS["query_memory"], {
            "scope": "shared", "memory": "perf", "query": question})
        # A name close to existing ones: the similar-name lookups of entity resolution.
        resolve(memory=selectors.memory_for(principal, "perf"), partition="shared",
                entities=[EntityIn(name="Ada Abbe", type="person")], resolutions={},
                assume_new=False)
    out = []
    for label, marker in (("query_memory, vector candidates", "embedding <=>"),
                          ("query_memory, word candidates", "search_vector @@ "),
                          ("write_episode, similar spelling", "similarity(normalized_name"),
                          ("write_episode, similar meaning", "name_embedding <=>")):
        sent = next(q["sql"] for q in captured.captured_queries if marker in q["sql"])
        sent_settings, sql = split_settings(sent)
        with connection.cursor() as cursor:
            cursor.execute("BEGIN")
            if sent_settings:
                cursor.execute(sent_settings)
            cursor.execute("SET LOCAL hnsw.ef_search = 64; "
                           "SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            cursor.execute("ROLLBACK")
        # A query vector is 384 numbers; the plan is what matters.
        out.append(f"-- {label}\n" + re.sub(r"'\[[-0-9.e,]+\]'", "'[vector]'", plan))
    return "\n\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--raw-sample", type=int, default=2000,
                        help="facts written by the raw-INSERT baseline at each size")
    parser.add_argument("--writers", type=int, default=4,
                        help="concurrent writers for the second half of each size's writes")
    parser.add_argument("--explain", action="store_true", help="print plans at each size")
    parser.add_argument("--context", type=int, default=None,
                        help="ECHO_MEMORY_EMBED_CONTEXT for this run (default: the product's); "
                             "0 embeds each fact alone, a third of the work")
    args = parser.parse_args()

    if args.context is not None:
        os.environ["ECHO_MEMORY_EMBED_CONTEXT"] = str(args.context)
    fresh_instance(indexing="manual")
    from memories.graph.selectors import memory_for
    from memories.graph.services import memory_create
    from memories.search import indexing

    cached = use_cached_embedder(queries_too=False)
    principal, account = bench_principal()
    memory_create(account_id=account.pk, name="perf")
    memory = memory_for(principal, "perf")
    names = corpus.people(2000)
    all_facts = corpus.facts(max(args.sizes), names)
    load_entities(principal, names)
    questions = corpus.questions(args.queries, names)

    rows = []
    written = 0
    for size in sorted(args.sizes):
        chunk = all_facts[written:size]
        half = len(chunk) // 2
        seconds = write_batches(principal, chunk[:half])
        concurrent_seconds = write_concurrently(principal, chunk[half:], args.writers)
        written = size
        sample = all_facts[:min(args.raw_sample, len(all_facts))]
        raw_seconds = raw_write_batches(memory.pk, sample)
        started = time.perf_counter()
        misses_before = cached.misses
        indexed = indexing.index_pending(progress=Checkpoint(cached))
        index_seconds = time.perf_counter() - started
        computed = cached.misses - misses_before
        cached.save()
        from django.db import connection

        with connection.cursor() as cursor:
            # What autovacuum would have done by now: the raw baseline's deleted rows
            # gone from the indexes, and fresh statistics.
            cursor.execute("VACUUM (ANALYZE) memories_fact")
            cursor.execute("ANALYZE memories_entity")
        # Warm-up, then measure.
        measure_queries(principal, questions[:20])
        timings = measure_queries(principal, questions)
        rows.append({
            "size": size,
            "write_fps": half / seconds,
            "concurrent_fps": (len(chunk) - half) / concurrent_seconds,
            "raw_fps": len(sample) / raw_seconds,
            "index_fps": indexed / index_seconds, "computed": computed, "indexed": indexed,
            "q": {k: (statistics.median(v), percentile(v, 95)) for k, v in timings.items()},
        })
        print(f"size {size}: wrote {len(chunk)} facts in {seconds + concurrent_seconds:.1f}s, "
              f"indexed {indexed} in "
              f"{index_seconds:.1f}s ({computed} vectors computed)", file=sys.stderr)
        if args.explain:
            plans = explain_hot_queries(principal, questions[0])
            print(f"\n--- plans at {size} facts ---\n{plans}\n")

    from django.conf import settings

    print("\nEngine speed (one process, 2 cores, embedded PostgreSQL 18 + pgvector 0.8, "
          f"embedding context {settings.ECHO_MEMORY_EMBED_CONTEXT})\n")
    print(f"{'facts':>8} {'write f/s':>10} {'raw SQL f/s':>12} {'ratio':>6} "
          f"{'query p50':>10} {'p95':>7} {'raw SQL p50':>12} {'p95':>7} {'embed p50':>10} "
          f"{'ratio p95':>10}")
    for row in rows:
        q = row["q"]
        print(f"{row['size']:>8} {row['write_fps']:>10.0f} {row['raw_fps']:>12.0f} "
              f"{row['raw_fps'] / row['write_fps']:>6.1f} {q['service'][0]:>10.1f} "
              f"{q['service'][1]:>7.1f} {q['raw'][0]:>12.1f} {q['raw'][1]:>7.1f} "
              f"{q['embed'][0]:>10.1f} {q['service'][1] / q['raw'][1]:>10.1f}")
    for row in rows:
        print(f"writes at {row['size']}: {row['write_fps']:.0f} facts/s from one writer, "
              f"{row['concurrent_fps']:.0f} facts/s from {args.writers} concurrent writers")
    for row in rows:
        how = ("every vector computed" if row["computed"] == row["indexed"]
               else "every vector from the cache" if not row["computed"]
               else f"{row['computed']} of {row['indexed']} vectors computed")
        print(f"indexer at {row['size']}: {row['index_fps']:.0f} facts/s ({how})")


if __name__ == "__main__":
    main()
