"""What metering costs on the hosted shape: the same calls with the ledger on and off.

    .venv/bin/python bench/metering.py [--facts 5000] [--queries 300] [--episodes 100]

Each call runs twice, alternately metered (SELF_HOSTED off: the allowance check, the
ledger increment and a usage record inside the call's transaction) and unmetered
(SELF_HOSTED on), on one box and one graph, so both see the same cache and load:
- query_memory, top_k 10, the query's vector cached (the embedding is not what is
  measured): p50 / p95 in ms and the ratio.
- write_episode, 20 new facts per episode: facts accepted per second and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import corpus
from bench.engine_perf import BATCH, load_entities, percentile, write_batches
from bench.setup import bench_principal, fresh_instance, use_cached_embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=100)
    options = parser.parse_args()

    fresh_instance(indexing="manual")  # writes are measured without embedding behind them
    use_cached_embedder(queries_too=True)
    from django.conf import settings

    from memories.graph import selectors
    from memories.graph.services import memory_create
    from memories.search import indexing

    principal, account = bench_principal()
    memory_create(account_id=account.pk, name="perf")
    names = corpus.people(400)
    load_entities(principal, names)
    all_facts = corpus.facts(options.facts + options.episodes * BATCH * 2, names)
    write_batches(principal, all_facts[:options.facts])
    indexing.index_pending()
    questions = corpus.questions(options.queries, names)
    for question in questions:  # the vectors are cached: the ledger is what differs
        selectors._query_vector(question)

    timings: dict[bool, list[float]] = {True: [], False: []}
    for index, question in enumerate(questions):
        for metered in ((True, False) if index % 2 else (False, True)):
            settings.SELF_HOSTED = not metered
            args = {"scope": "shared", "memory": "perf", "query": question, "top_k": 10}
            started = time.perf_counter()
            result = selectors.query_memory(principal, **args)
            timings[metered].append((time.perf_counter() - started) * 1000)
            assert result["facts"], question

    writes: dict[bool, float] = {True: 0.0, False: 0.0}
    rest = all_facts[options.facts:]
    for episode in range(options.episodes * 2):
        metered = episode % 2 == 0
        settings.SELF_HOSTED = not metered
        writes[metered] += write_batches(principal, rest[episode * BATCH:(episode + 1) * BATCH])

    print(f"graph: {options.facts:,} facts; {options.queries} queries and "
          f"{options.episodes} episodes of {BATCH} facts each way, alternating")
    for metered in (False, True):
        label = "metered  " if metered else "unmetered"
        values = timings[metered]
        print(f"query_memory {label}: p50 {statistics.median(values):6.2f} ms   "
              f"p95 {percentile(values, 95):6.2f} ms")
    print(f"query_memory metered / unmetered: p50 "
          f"{statistics.median(timings[True]) / statistics.median(timings[False]):.2f}x   "
          f"p95 {percentile(timings[True], 95) / percentile(timings[False], 95):.2f}x")
    rates = {m: options.episodes * BATCH / writes[m] for m in (False, True)}
    print(f"write_episode: unmetered {rates[False]:,.0f} facts/s   metered "
          f"{rates[True]:,.0f} facts/s   ratio {rates[True] / rates[False]:.2f}x")


if __name__ == "__main__":
    main()
