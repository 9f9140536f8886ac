"""Freshness under load: from a write's acknowledgement to its facts being found by meaning.

    .venv/bin/python bench/freshness.py [--episodes 15] [--load-fps 200] [--sizes 1 4 16 500]

The single box as shipped (indexer in a background thread, real model, no vector
cache). Account B imports without pause: episodes of 20 facts at --load-fps, more than
the indexer embeds, so B's backlog grows for the whole run. Meanwhile account A writes
episodes of 1, 4, 16 or 500 facts, one at a time, and for each one the bench measures:

- first pass: whether every fact of the episode was searchable by meaning when the write
  was acknowledged (its first-pass vector is written with it: memories/search/first_pass.py);
- indexer: seconds from the acknowledgement until every fact of the episode has its
  settled vector (the model's), with nobody querying (polled every 10 ms): the indexer's
  fair turns alone;
- next call: A calls query_memory at once; its latency, and how many facts of A's the
  reply counts as still waiting for the settled vector (searched by first pass).

It prints p50 / p95 of each, per episode size; then B's backlog when its import stops,
and how long the indexer takes to drain it with nothing else writing (it must: a backlog
still waiting after --drain-timeout seconds ends the run with an error).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.engine_perf import percentile
from bench.setup import bench_principal, fresh_instance

WORDS = ("invoice", "shipment", "refund", "ledger", "customer", "warehouse", "audit",
         "payment", "order", "supplier")


def episode(tag: str, size: int) -> dict:
    entities = [{"name": "Dana", "type": "person"}, {"name": "billing", "type": "service"}]
    facts = [{"source": "Dana", "target": "billing", "relation_type": f"{tag} {i}",
              "fact": f"Dana checked {WORDS[i % len(WORDS)]} {tag}-{i} in billing before the "
                      f"{WORDS[(i + 3) % len(WORDS)]} review", "confidence": "extracted"}
             for i in range(size)]
    return {"scope": "shared", "session_id": tag, "entities": entities, "facts": facts}


class Importer(threading.Thread):
    """Account B: 20-fact episodes at a steady rate, until stopped."""

    def __init__(self, principal, facts_per_second: float):
        super().__init__(daemon=True)
        self.principal, self.interval = principal, 20 / facts_per_second
        self.stop = threading.Event()
        self.written = 0

    def run(self) -> None:
        from django.db import connection

        from tools.calling import run_validated
        from tools.registry import TOOLS

        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                run_validated(self.principal, TOOLS["write_episode"], episode(
                    f"import-{self.written}", 20))
                self.written += 20
                self.stop.wait(max(0.0, self.interval - (time.perf_counter() - started)))
        finally:
            connection.close()


def waiting_of(fact_ids: list[str]) -> int:
    from memories.models import Fact

    return Fact.objects.filter(pk__in=fact_ids, embedding__isnull=True).count()


def without_any_vector(fact_ids: list[str]) -> int:
    from memories.models import Fact

    return Fact.objects.filter(pk__in=fact_ids, embedding__isnull=True,
                               first_pass_embedding__isnull=True).count()


def drain(pending_count, timeout: float) -> tuple[int, float]:
    """The backlog when the import stopped, and the seconds the indexer thread took to
    embed all of it with nothing else to wake it; exits with an error if it does not
    within `timeout` (an indexer that stopped with facts waiting)."""
    stopped = time.perf_counter()
    backlog = left = pending_count()
    while left:
        if time.perf_counter() - stopped > timeout:
            sys.exit(f"the indexer left {left} of {backlog} facts waiting for {timeout:.0f}s "
                     "after the import stopped")
        time.sleep(0.05)
        left = pending_count()
    return backlog, time.perf_counter() - stopped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=15, help="per size and measure")
    parser.add_argument("--load-fps", type=float, default=200.0)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 500])
    parser.add_argument("--drain-timeout", type=float, default=600.0,
                        help="seconds the indexer may take to drain B's backlog at the end")
    args = parser.parse_args()

    fresh_instance(indexing="thread")
    from memories.search.embeddings import get_embedder
    from memories.search.indexing import pending_count
    from tools.calling import run_validated
    from tools.registry import TOOLS

    get_embedder().embed(["warm up"] * 40)  # both sessions built before anything is timed
    agent, _ = bench_principal("agent")
    importer_principal, _ = bench_principal("importer")
    importer = Importer(importer_principal, args.load_fps)
    importer.start()
    time.sleep(5)  # let B's backlog build up first
    rows = []
    for size in args.sizes:
        indexer_seconds, call_seconds, waiting, first_pass = [], [], [], 0
        for n in range(args.episodes):
            reply = run_validated(agent, TOOLS["write_episode"], episode(f"a{size}-{n}", size))
            acknowledged = time.perf_counter()
            ids = [edge["fact_id"] for edge in reply["edges_created"]]
            first_pass += not without_any_vector(ids)
            while waiting_of(ids):
                time.sleep(0.01)
            indexer_seconds.append(time.perf_counter() - acknowledged)
        for n in range(args.episodes):
            run_validated(agent, TOOLS["write_episode"], episode(f"q{size}-{n}", size))
            asked = time.perf_counter()
            answer = run_validated(agent, TOOLS["query_memory"], {
                "scope": "shared", "query": "Who looked over the money records?", "top_k": 10})
            call_seconds.append(time.perf_counter() - asked)
            waiting.append(answer["facts_pending_vector"])
        rows.append((size, first_pass, indexer_seconds, call_seconds, waiting))
        print(f"size {size} done; B's backlog {pending_count()} facts", file=sys.stderr)
    importer.stop.set()
    importer.join(30)
    backlog, drained = drain(pending_count, args.drain_timeout)

    print(f"\nFreshness under a steady import by another account ({args.load_fps:.0f} facts/s "
          f"offered, {importer.written} written; {backlog} waiting when the import stopped, "
          f"drained by the indexer alone in {drained:.1f}s)\n")
    print(f"{'facts/episode':>13} {'first pass at ack':>18} {'indexer p50':>12} {'p95':>7} "
          f"{'next call p50':>14} {'p95':>7} {'waiting for settled':>20}")
    for size, first_pass, indexer_seconds, call_seconds, waiting in rows:
        print(f"{size:>13} {first_pass:>12}/{len(indexer_seconds):<5} "
              f"{statistics.median(indexer_seconds):>11.2f}s "
              f"{percentile(indexer_seconds, 95):>6.2f}s "
              f"{statistics.median(call_seconds) * 1000:>11.0f} ms "
              f"{percentile(call_seconds, 95) * 1000:>4.0f} ms "
              f"{statistics.median(waiting):>13.0f} (p50)")


if __name__ == "__main__":
    main()
