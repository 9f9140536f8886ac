"""Disk per fact: table and index sizes of a box holding --facts facts, per fact and scaled.

    .venv/bin/python bench/storage.py [--facts 30000] [--backup]

One private box (embedded PostgreSQL in a temp dir) gets one account and --facts facts,
written by write_episode in episodes of 500 among 200 entities (so every fact has its
audit event, episode row and word statistics, as a served box does), then embeddings in
bulk SQL (random vectors: a halfvec(384) and its HNSW node take the same bytes whatever
the values) and the HNSW index built once. After VACUUM ANALYZE it prints, per table, the
rows and the bytes of heap (with TOAST) and of indexes, per fact and multiplied up to one
million facts. The multiplication is an extrapolation: everything here grows with the
number of facts, but it is not a measurement at 1M. With --backup it also times
`echo-memory backup`'s dump of the box and its restore into a new embedded server.

Fact texts average about 110 characters (printed); a box whose facts are longer grows by
roughly twice the extra characters per fact (the fact row and its audit event hold the
text, the word index a little more).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.setup import bench_principal, fresh_instance

EPISODE = 500
ENTITIES = 200
MILLION = 1_000_000
# Sentences of the length agents write: a subject, a relation and a reason or a detail.
TEMPLATES = [
    "{a} depends on {b} for session storage since the March migration; on-call hears of lag.",
    "{a} was rolled back after {b} started timing out under the evening load test number {i}.",
    "The team that owns {a} agreed with the owners of {b} to share one deploy window, case {i}.",
    "{a} reads its feature flags from {b}; a stale flag there caused incident {i} last quarter.",
]


def load(principal, total: int) -> None:
    from django.db import connection
    from tqdm import tqdm

    from memories.search.storing import count_terms
    from tools.calling import run_validated
    from tools.registry import TOOLS

    names = [f"Service {i}" for i in range(ENTITIES)]
    for start in tqdm(range(0, total, EPISODE), desc="loading facts", unit="episode"):
        facts = []
        for i in range(start, min(total, start + EPISODE)):
            a, b = names[i % ENTITIES], names[(i * 7 + 1) % ENTITIES]
            facts.append({"source": a, "target": b, "relation_type": f"rel_{i}",
                          "fact": TEMPLATES[i % len(TEMPLATES)].format(a=a, b=b, i=i),
                          "confidence": "extracted"})
        run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "assume_new": start == 0, "facts": facts,
            "entities": [{"name": name, "type": "service"} for name in names]})
    with connection.cursor() as cursor:
        # Vectors under a live HNSW index go in one by one; building it once is what a
        # bulk load does (the same as bench/transport.py).
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'fact_embedding'")
        definition = cursor.fetchone()[0]
        cursor.execute("DROP INDEX fact_embedding")
        cursor.execute(
            "UPDATE memories_fact SET embedding = (SELECT array_agg(random() - 0.5)::halfvec "
            "FROM generate_series(1, 384) WHERE memories_fact.id IS NOT NULL) "
            "WHERE embedding IS NULL")
        cursor.execute("SELECT array_agg(id) FROM memories_fact")
        count_terms(cursor, cursor.fetchone()[0])
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(definition)


def database_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0]


def sizes() -> tuple[list[tuple[str, int, int, int]], int, int, float]:
    """(table, rows, heap bytes, index bytes) per table, the database's bytes, the HNSW
    index's bytes and the mean fact length."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute(
            "SELECT c.relname, c.reltuples::bigint, pg_table_size(c.oid), pg_indexes_size(c.oid) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' "
            "ORDER BY pg_total_relation_size(c.oid) DESC")
        tables = cursor.fetchall()
        cursor.execute("SELECT pg_database_size(current_database()), "
                       "pg_relation_size('fact_embedding'), "
                       "(SELECT avg(length(fact)) FROM memories_fact)")
        database, hnsw, mean_length = cursor.fetchone()
    return tables, database, hnsw, float(mean_length)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=30_000)
    parser.add_argument("--backup", action="store_true",
                        help="also time `echo-memory backup` and a restore into a new box")
    args = parser.parse_args()
    fresh_instance(indexing="manual")
    principal, _ = bench_principal()
    empty = database_bytes()  # catalogs and empty tables: a fixed cost, not per fact
    began = time.perf_counter()
    load(principal, args.facts)
    print(f"loaded and indexed {args.facts} facts in {time.perf_counter() - began:.0f}s",
          file=sys.stderr)
    tables, database, hnsw, mean_length = sizes()
    scale = MILLION / args.facts
    print(f"{args.facts} facts, mean fact text {mean_length:.0f} characters; "
          f"'per 1M' multiplies by {scale:.0f} (an extrapolation, not a 1M measurement)")
    print(f"{'table':<32}{'rows':>9}{'heap MB':>9}{'index MB':>10}{'B/fact':>8}{'per 1M GB':>11}")
    shown = 0
    for name, rows, heap, index in tables:
        total = heap + index
        if total < 1_000_000:
            continue
        shown += total
        print(f"{name:<32}{max(rows, 0):>9}{heap / 1e6:>9.1f}{index / 1e6:>10.1f}"
              f"{total / args.facts:>8.0f}{total * scale / 1e9:>11.2f}")
    grown = database - empty
    rest = grown - shown
    print(f"{'(the other tables)':<32}{'':>9}{'':>9}{'':>10}"
          f"{rest / args.facts:>8.0f}{rest * scale / 1e9:>11.2f}")
    print(f"{'database, less the empty one':<32}{'':>9}{'':>9}{'':>10}"
          f"{grown / args.facts:>8.0f}{grown * scale / 1e9:>11.2f}")
    print(f"the empty database (catalogs, empty tables): {empty / 1e6:.0f} MB, once")
    print(f"of which the HNSW index on fact vectors: {hnsw / args.facts:.0f} B/fact, "
          f"{hnsw * scale / 1e9:.2f} GB per 1M")
    if args.backup:
        backup_and_restore(args.facts)


def backup_and_restore(facts: int) -> None:
    """`echo-memory backup`'s dump of this box and its restore into a new embedded server."""
    import shutil
    import tempfile

    from django.db import connections

    from echomem import embedded_db
    from echomem.backup import backup, restore
    from echomem.runtime import EMBEDDED_URL_VARIABLE

    connections.close_all()
    scratch = Path(tempfile.mkdtemp(prefix="echo-bench-restore-"))
    try:
        archive = scratch / "box.dump"
        began = time.perf_counter()
        size = backup(os.environ[EMBEDDED_URL_VARIABLE], archive)
        dumped = time.perf_counter() - began
        (scratch / "home").mkdir()
        target = embedded_db.start(scratch / "home")
        began = time.perf_counter()
        restore(target.url, archive, where="the new box")
        restored = time.perf_counter() - began
        print(f"backup: {size / 1e6:.1f} MB ({size / facts:.0f} B/fact, "
              f"{size * MILLION / facts / 1e9:.2f} GB per 1M) in {dumped:.1f}s; "
              f"restore into a new embedded server: {restored:.1f}s")
    finally:
        embedded_db.stop(scratch / "home")
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
