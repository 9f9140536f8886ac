"""First-pass vectors (memories/search/first_pass.py): what they cost a write, how good they are,
and what the first query after a 500-fact write costs.

    .venv/bin/python bench/first_pass.py [--rounds 3] [--facts 2000] [--episodes 20]
                                         [--parts quality write-cost first-query]
                                         [--indexer thread|elsewhere]

1. quality: on bench/data/runbooks, every fact's first-pass vector against the model's,
   each fact alone and each with the facts before it in its record (what the product
   stores: `first_pass.in_episode` and the indexer's context): mean cosine, and recall@10
   of the set's questions (embedded by the model) when every fact has only its
   first-pass vector, next to the model's. Then the calibration line (first-pass cosine
   -> model cosine, both with context) fitted by least squares on each question's ten
   best cosines of each kind matched in order, without the answers: the constants the
   product uses are printed beside it.
2. write cost: write_episode, one writer, 20 facts per episode, --facts facts a round,
   rounds alternating ECHO_MEMORY_FIRST_PASS on and off (and which goes first) in one
   instance (indexer manual, so nothing else runs); facts/s per round, median of each.
3. first query after a 500-fact write: the single box as shipped (indexer thread,
   query budget as configured; `--indexer elsewhere`: no indexer in this process, as
   with Celery workers on other machines), --episodes times: write a 500-fact episode, then at
   once query_memory with a question; p50 / p95 of that call, with the query's own
   embedding budget as shipped and with it off (first pass only), and whether the
   reply held the episode's target fact by meaning.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import corpus, runbooks_dataset
from bench.engine_perf import percentile
from bench.setup import bench_principal, fresh_instance

TARGET = {"source": "Alice", "target": "Kyoto", "relation_type": "travelled_to",
          "fact": "Alice spent her spring holiday hiking near Kyoto", "confidence": "extracted"}
QUESTION = "Who went trekking in the mountains during a vacation?"
PARTS = ("quality", "write-cost", "first-query")


class Vectors(NamedTuple):
    """The runbooks set's facts by both kinds, alone and with context, and its questions."""

    facts: list[dict]
    questions: list[dict]
    asked: np.ndarray
    model: dict[str, np.ndarray]
    first: dict[str, np.ndarray]


def runbooks_vectors() -> Vectors:
    from memories.search import first_pass, storing
    from memories.search.embeddings import get_embedder

    _, facts, questions = runbooks_dataset.load()
    texts = [f["fact"] for f in facts]
    # Each fact's place in its record, to embed it with the two before it as the indexer does.
    seen: Counter[str] = Counter()
    position = []
    for fact in facts:
        position.append(seen[fact["episode"]])
        seen[fact["episode"]] += 1
    with_context = [storing.with_context(texts[i], " ".join(texts[i - min(2, position[i]):i]))
                    for i in range(len(facts))]
    model = {"alone": get_embedder().embed(texts),
             "with context": get_embedder().embed(with_context)}
    first = {"alone": first_pass.vectors(texts), "with context": np.zeros_like(model["alone"])}
    for record in seen:
        rows = [i for i, f in enumerate(facts) if f["episode"] == record]
        first["with context"][rows] = first_pass.in_episode([texts[i] for i in rows],
                                                            [position[i] for i in rows])
    asked = get_embedder().embed([q["question"] for q in questions])
    return Vectors(facts, questions, asked, model, first)


def calibration(vectors: Vectors, *, best: int | None = 10) -> tuple[float, float]:
    """The line first-pass cosine -> model cosine, both with context, as (scale, offset).

    What a mixed ranking needs is that a first-pass tenth-best means what the model's
    tenth-best means: so each question's `best` cosines of one kind are matched, in order,
    to its `best` of the other (no answers used). `best=None` fits over every pair, which
    the unrelated bulk rules: it set first-pass vectors too low among settled ones.
    """
    first = vectors.asked @ vectors.first["with context"].T
    model = vectors.asked @ vectors.model["with context"].T
    if best is not None:
        first, model = (-np.sort(-scores, axis=1)[:, :best] for scores in (first, model))
    scale, offset = np.polyfit(first.ravel(), model.ravel(), 1)
    return float(scale), float(offset)


def quality() -> None:
    from memories.search import first_pass

    vectors = runbooks_vectors()
    row_of = {f["id"]: i for i, f in enumerate(vectors.facts)}

    def recall(stored: np.ndarray) -> float:
        scores = vectors.asked @ stored.T
        return statistics.mean(
            statistics.mean(row_of[e] in np.argsort(-scores[i])[:10] for e in q["evidence"])
            for i, q in enumerate(vectors.questions))

    print(f"\n1. quality on runbooks ({len(vectors.facts)} facts, "
          f"{len(vectors.questions)} questions)")
    for kind in ("alone", "with context"):
        first, model = vectors.first[kind], vectors.model[kind]
        print(f"   {kind}: cosine first pass vs model, same fact "
              f"{float((first * model).sum(1).mean()):.3f}; recall@10, vectors only: model "
              f"{recall(model):.3f}, first pass {recall(first):.3f}")
    scale, offset = calibration(vectors)
    bulk_scale, bulk_offset = calibration(vectors, best=None)
    print(f"   calibration fitted here (with context, each question's ten best): scale "
          f"{scale:.3f}, offset {offset:.3f} (over every pair: {bulk_scale:.3f}, "
          f"{bulk_offset:.3f}); the product uses {first_pass.CALIBRATION_SCALE}, "
          f"{first_pass.CALIBRATION_OFFSET}")


def write_cost(rounds: int, total: int) -> None:
    from django.conf import settings

    from tools.calling import run_validated
    from tools.registry import TOOLS

    principal, _ = bench_principal("writer")
    names = corpus.people(300)
    facts = corpus.facts(total * rounds * 2, names)
    rates: dict[bool, list[float]] = {True: [], False: []}
    offset = 0
    for turn in range(rounds):
        # Alternating which goes first, so a machine warming up or slowing down is shared.
        for enabled in ((True, False) if turn % 2 == 0 else (False, True)):
            settings.ECHO_MEMORY_FIRST_PASS = enabled
            started = time.perf_counter()
            for start in range(offset, offset + total, 20):
                batch = facts[start:start + 20]
                run_validated(principal, TOOLS["write_episode"], {
                    "scope": "shared", "assume_new": start == 0, "facts": batch,
                    "entities": [{"name": n, "type": "thing"}
                                 for n in sorted({f[k] for f in batch
                                                  for k in ("source", "target")})]})
            rates[enabled].append(total / (time.perf_counter() - started))
            offset += total
    settings.ECHO_MEMORY_FIRST_PASS = True
    print(f"\n2. write_episode, one writer, 20 facts an episode, {total} facts a round")
    for enabled in (True, False):
        print(f"   first pass {'on ' if enabled else 'off'}: "
              + ", ".join(f"{r:,.0f}" for r in rates[enabled])
              + f" facts/s (median {statistics.median(rates[enabled]):,.0f})")


def first_query(episodes: int, indexer: str) -> None:
    from django.conf import settings

    from memories.graph.services import memory_create
    from tools.calling import run_validated
    from tools.registry import TOOLS

    names = corpus.people(300)
    budget = settings.ECHO_MEMORY_QUERY_EMBED_FACTS
    where = ("indexer thread, sharing the cores" if indexer == "thread"
             else "indexer elsewhere: nothing else embeds here")
    print(f"\n3. first query_memory right after a 500-fact write ({episodes} episodes each; "
          f"{where})")
    for label, facts_budget in ((f"query budget {budget} facts (as shipped)", budget),
                                ("query budget 0 (first pass only)", 0)):
        settings.ECHO_MEMORY_QUERY_EMBED_FACTS = facts_budget
        principal, account = bench_principal(f"agent{facts_budget}")
        seconds, found = [], 0
        for n in range(episodes):
            # A memory of its own each time: the episode is all it holds, as on a first write.
            memory = f"day-{n}"
            memory_create(account_id=account.pk, name=memory)
            batch = corpus.facts(499, names, seed=100 + n)
            batch.insert(n * 97 % 500, TARGET)
            entities = sorted({f[k] for f in batch for k in ("source", "target")})
            run_validated(principal, TOOLS["write_episode"], {
                "scope": "shared", "memory": memory, "assume_new": True, "facts": batch,
                "entities": [{"name": e, "type": "thing"} for e in entities]})
            started = time.perf_counter()
            reply = run_validated(principal, TOOLS["query_memory"], {
                "scope": "shared", "memory": memory, "query": QUESTION, "top_k": 10})
            seconds.append(time.perf_counter() - started)
            found += any(f["fact"] == TARGET["fact"] and "vector" in f["matched"]
                         for f in reply["facts"])
        print(f"   {label}: p50 {statistics.median(seconds) * 1000:.0f} ms, "
              f"p95 {percentile(seconds, 95) * 1000:.0f} ms, target found by meaning "
              f"{found}/{episodes}")
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--facts", type=int, default=2000, help="per write-cost round")
    parser.add_argument("--episodes", type=int, default=20, help="500-fact writes per setting")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="run only these parts (default all three)")
    parser.add_argument("--indexer", choices=("thread", "elsewhere"), default="thread",
                        help="first-query: the single box's indexer thread in this process "
                             "(default), or none here, as with Celery workers on other "
                             "machines")
    args = parser.parse_args()

    fresh_instance(indexing="manual")
    from memories.search import first_pass

    first_pass.ensure()
    if "quality" in args.parts:
        quality()
    if "write-cost" in args.parts:
        write_cost(args.rounds, args.facts)
    if "first-query" in args.parts:
        from django.conf import settings

        from memories.search import indexing

        if args.indexer == "thread":
            settings.ECHO_MEMORY_INDEXING = "thread"
            indexing.background()
        first_query(args.episodes, args.indexer)


if __name__ == "__main__":
    main()
