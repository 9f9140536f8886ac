"""First-pass vectors beside settled ones: LoCoMo vector recall while the indexer works.

    .venv/bin/python bench/first_pass_mixed.py [--data PATH]

Right after a write some of a memory's facts have the model's vector and the rest their
first-pass vector, and query_memory ranks both in one list, a first-pass cosine mapped
onto the model's scale by the calibration line (memories/search/first_pass.py). This replays
that state offline on the LoCoMo dev conversations: each conversation's oldest share of
facts settled (the indexer takes the oldest first), the rest first pass, both with their
episode context as the product stores them; each question (embedded by the model) ranks
all facts by cosine, and recall@10 of its evidence is averaged. Printed for the line the
product uses and for the line fitted over every pair (what the product used before), at
0, 20, 50, 80 and 100% settled. The line is fitted on bench/data/runbooks
(bench/first_pass.py), so these figures are held out from the fit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.first_pass import calibration, runbooks_vectors
from bench.locomo import CATEGORIES, DEFAULT_DATA, evidence_of, sessions
from bench.setup import CachedEmbedder, fresh_instance

SETTLED_SHARES = (0.0, 0.2, 0.5, 0.8, 1.0)


def conversation(sample: dict, embedder) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(model vectors, first-pass vectors, dia ids) of a conversation's facts, in order."""
    from memories.search import first_pass
    from memories.search.fact_text import search_text_for

    model_texts, first, dias = [], [], []
    for _, facts in sessions(sample):
        texts = [search_text_for(f["fact"], f["source"], f["target"]) for f in facts]
        # As the indexer embeds a fact: the two before it in its episode, then its own.
        model_texts += [" ".join(texts[max(0, i - 2):i + 1]) for i in range(len(texts))]
        first.append(first_pass.in_episode(texts, range(len(texts))))
        dias += [f["relation_type"].removeprefix("said ") for f in facts]
    return embedder.embed(model_texts), np.vstack(first), dias


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()

    fresh_instance(indexing="manual")
    from memories.search import first_pass
    from memories.search.embeddings import get_embedder

    embedder = CachedEmbedder(get_embedder())
    bulk = calibration(runbooks_vectors(), best=None)
    lines = {f"product ({first_pass.CALIBRATION_SCALE}, {first_pass.CALIBRATION_OFFSET})":
             (first_pass.CALIBRATION_SCALE, first_pass.CALIBRATION_OFFSET),
             f"over every pair ({bulk[0]:.3f}, {bulk[1]:.3f})": bulk}
    recalls: dict[tuple[str, float], list[float]] = {
        (name, share): [] for name in lines for share in SETTLED_SHARES}
    for sample in json.loads(args.data.read_text()):
        model, first, dias = conversation(sample, embedder)
        known = set(dias)
        questions = [(q["question"], evidence_of(q, known)) for q in sample["qa"]
                     if q.get("category") in CATEGORIES]
        questions = [(q, evidence) for q, evidence in questions if evidence]
        asked = embedder.embed([q for q, _ in questions])
        for name, (scale, offset) in lines.items():
            for share in SETTLED_SHARES:
                settled = int(len(dias) * share)
                scores = np.hstack([asked @ model[:settled].T,
                                    scale * (asked @ first[settled:].T) + offset])
                for row, (_, evidence) in enumerate(questions):
                    top = {dias[i] for i in np.argsort(-scores[row])[:10]}
                    recalls[(name, share)].append(len(top & set(evidence)) / len(evidence))
    embedder.save()
    print("\nLoCoMo vector recall@10 with the oldest share of facts settled, the rest first "
          "pass\n")
    print(f"{'calibration line':<34}" + "".join(f"{f'{s:.0%} settled':>14}"
                                               for s in SETTLED_SHARES))
    for name in lines:
        print(f"{name:<34}" + "".join(f"{statistics.mean(recalls[(name, s)]):>14.3f}"
                                      for s in SETTLED_SHARES))


if __name__ == "__main__":
    main()
