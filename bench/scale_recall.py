"""What the HNSW misses on a box bench/scale.py kept: how far, in cosine, and from where.

    .venv/bin/python bench/scale_recall.py /tmp/echo-scale-1m [--questions 50]

For the first --questions of bench/scale.py's measured questions, embedded here, the
service's vector search (vector_candidates: 50 candidates, ef_search 64, iterative scan)
against the same search with index scans off (exact). Prints recall@10, the cosine of
the 10th neighbour both ways, recall@10 counting a neighbour within 0.01 of the exact
10th's cosine as found, and how many distinct real sentences (bulk fact i comes from
sentence i mod --real) the exact 10 and 50 come from: the synthetic bulk's clusters.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import scale_corpus
from bench.setup import fresh_instance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home")
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--ef-search", type=int, default=64)
    parser.add_argument("--people", type=int, default=5_000)
    parser.add_argument("--real", type=int, default=20_000)
    args = parser.parse_args()
    fresh_instance(indexing="manual", keep=args.home)
    from django.db import connection, transaction

    from memories.models import Fact, Memory
    from memories.search import candidates
    from memories.search.embeddings import get_embedder
    from memories.search.window import Window

    candidates.HNSW_EF_SEARCH = args.ef_search
    memory_id = Memory.objects.get(name="scale").pk
    vocabulary = scale_corpus.Vocabulary(args.people)
    questions = scale_corpus.questions(args.questions + 30, vocabulary, seed=41)[30:]
    vectors = get_embedder().embed(questions)
    rows = []
    for vector in vectors:
        with transaction.atomic():
            approximate = candidates.vector_candidates(memory_id, "shared", vector, 50,
                                                       Window())
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off")
            exact = candidates.vector_candidates(memory_id, "shared", vector, 50, Window())
        tenth = exact[9].score
        found = {c.fact_id for c in approximate[:10]}
        bases = dict(Fact.objects.filter(pk__in=[c.fact_id for c in exact])
                     .values_list("pk", "relation_type"))
        base = [int(bases[c.fact_id].rsplit("_", 1)[1]) % args.real for c in exact]
        rows.append({
            "recall": len(found & {c.fact_id for c in exact[:10]}) / 10,
            "tolerant": sum(c.score >= tenth - 0.01 for c in approximate[:10]) / 10,
            "tenth_exact": tenth, "tenth_hnsw": approximate[9].score,
            "first_gap": exact[0].score - approximate[0].score,
            "bases10": len(set(base[:10])), "bases50": len(set(base)),
        })
    mean = lambda key: statistics.mean(r[key] for r in rows)  # noqa: E731
    print(f"{len(rows)} questions, ef_search {args.ef_search}: recall@10 {mean('recall'):.3f}; "
          f"within 0.01 of the exact 10th {mean('tolerant'):.3f}; cosine of the 10th: exact "
          f"{mean('tenth_exact'):.3f}, HNSW {mean('tenth_hnsw'):.3f}; first neighbour "
          f"{mean('first_gap'):.3f} lower on average; the exact 10 come from "
          f"{mean('bases10'):.1f} real sentences, the exact 50 from {mean('bases50'):.1f}")


if __name__ == "__main__":
    main()
