"""The learned order of the pool (memories.search.hybrid.RANK_WEIGHTS): fitted and
cross-validated on ranking_cv's recording.

    .venv/bin/python bench/ranking_ltr.py [--lam L]

Per question, every candidate of the pool (the union of the two lists fuse is handed)
gets hybrid.rank_features, the product's own; a linear model scores them, its weights
doubled for queries that name an entity of the memory (a weight for every query and one
added when a name is found). The loss is the softmax over each question's pool of its
evidence (ListNet with the evidence equally likely), every question counting the same,
with an L2 penalty; fitted by Newton's method with a backtracking line search (numpy
only: a few dozen weights, no package needed). Five folds, exactly bench/ranking_cv.py's
(LoCoMo by conversation, the other sets by episode, a mixed question in its origin's
fold): fitted on four, scored on the fifth. Prints per set the shipped ranking, held-out
and in-sample recall@10 and the paired difference with its standard error, and the
weights fitted on every question (what RANK_WEIGHTS holds). ranking_cv.py imports
`cross_validate` for its per-kind table.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# The penalty: 0.1 gave back most of the gain on LoCoMo and lost on the FAQ (held out
# 0.802 and 0.784 against 0.816 and 0.866 at 0.01), 0.001 gained less on LoCoMo (0.807).
LAMBDA = 0.01


def pool(row: dict) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A question's pool in the product's reciprocal-rank order: ids, features (per
    RANK_WEIGHTS, then the same times "names an entity"), whether each is evidence."""
    from memories.search import hybrid

    recorded = row["recorded"]
    vector = [c for c in recorded.vector if c.score >= hybrid.VECTOR_FLOOR]
    saved = hybrid.LEARNED_RANKING
    hybrid.LEARNED_RANKING = False
    try:
        hits = hybrid.fuse(recorded.vector, recorded.text, 10**6, recorded.mentioned)
    finally:
        hybrid.LEARNED_RANKING = saved
    features = hybrid.rank_features(hits, vector, recorded.text, recorded.mentioned)
    named = float(bool(recorded.mentioned))
    x = np.array([[features[h.fact_id][n] for n in hybrid.RANK_WEIGHTS] for h in hits],
                 dtype=float).reshape(len(hits), len(hybrid.RANK_WEIGHTS))
    evidence = set(row["evidence"])
    return ([str(h.fact_id) for h in hits], np.hstack([x, x * named]),
            np.array([str(h.fact_id) in evidence for h in hits], dtype=float))


def fit(pools: list, lam: float = LAMBDA, iterations: int = 50) -> np.ndarray:
    """Weights minimizing the mean softmax loss of the pools plus lam/2 |w|^2."""
    usable = [(x, y) for _, x, y in pools if 0 < y.sum() < len(y)]
    d = pools[0][1].shape[1]
    share = 1 / max(len(usable), 1)

    def loss(w):
        total, grad, hess = 0.5 * lam * w @ w, lam * w, lam * np.eye(d)
        for x, y in usable:
            s = x @ w
            s = s - s.max()
            lse = math.log(np.exp(s).sum())
            p, t = np.exp(s - lse), y / y.sum()
            mu = p @ x
            total += share * (lse - t @ s)
            grad = grad + share * (mu - t @ x)
            hess = hess + share * ((x * p[:, None]).T @ x - np.outer(mu, mu))
        return total, grad, hess

    w = np.zeros(d)
    value, grad, hess = loss(w)
    for _ in range(iterations):
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:
            new = loss(w - t * step)
            if new[0] <= value - 1e-4 * t * (grad @ step) or t < 1e-6:
                break
            t /= 2
        w = w - t * step
        value, grad, hess = new
        if np.abs(t * step).max() < 1e-6:
            break
    return w


def recall_at(pool_: tuple, w: np.ndarray, evidence: list[str], k: int = 10) -> float:
    ids, x, _ = pool_
    order = sorted(range(len(ids)), key=lambda n: -(x[n] @ w))[:k]  # stable, as fuse
    return len({ids[n] for n in order} & set(evidence)) / len(evidence)


def cross_validate(rows: list[dict], fold: dict[int, int], folds: int = 5,
                   lam: float = LAMBDA) -> dict:
    """recall@10 per question: `held` (weights fitted on the other folds), `in_sample`
    (fitted on all), and those weights (`final`)."""
    pools = [pool(row) for row in rows]
    held = {}
    for k in range(folds):
        w = fit([p for i, p in enumerate(pools) if fold[i] != k], lam)
        held |= {i: recall_at(pools[i], w, rows[i]["evidence"])
                 for i in range(len(rows)) if fold[i] == k}
    final = fit(pools, lam)
    return {"held": held, "final": final,
            "in_sample": {i: recall_at(p, final, rows[i]["evidence"])
                          for i, p in enumerate(pools)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lam", type=float, default=LAMBDA)
    parser.add_argument("--data", type=Path, help="the LoCoMo conversations (default "
                        "bench/locomo.py's dev set)")
    args = parser.parse_args()
    from bench.ranking_cv import fold_of, mean, paired_se, recall
    from bench.ranking_cv_recording import COLLECTIONS, DEFAULT_SOURCES, DIALOGUE, recording

    sources = DEFAULT_SOURCES | ({DIALOGUE: args.data} if args.data else {})
    for name, collection in COLLECTIONS.items():
        if collection.build:
            collection.build(sources[name], sources)
    rows, _ = recording(sources, again=False)
    from memories.search import hybrid

    sets = {name: [i for i, row in enumerate(rows) if row["set"] == name] for name in sources}
    fold, _ = fold_of(rows, sets, sources)
    run = cross_validate(rows, fold, lam=args.lam)
    saved = hybrid.LEARNED_RANKING
    hybrid.LEARNED_RANKING = False
    try:
        rrf = [recall([str(h.fact_id) for h in hybrid.fuse(
            r["recorded"].vector, r["recorded"].text, 10, r["recorded"].mentioned)],
            r["evidence"]) for r in rows]
    finally:
        hybrid.LEARNED_RANKING = saved
    print(f"{'recall@10':<10} {'rrf':>6} {'held-out':>9} {'diff +/- se':>16} {'in-sample':>10}")
    for name, index in sets.items():
        held = [run["held"][i] for i in index]
        base = [rrf[i] for i in index]
        print(f"{name:<10} {mean(base):>6.3f} {mean(held):>9.3f} "
              f"{mean(held) - mean(base):>+8.3f} +/- {paired_se(held, base):.3f} "
              f"{mean(run['in_sample'][i] for i in index):>10.3f}")
    n = len(hybrid.RANK_WEIGHTS)
    print("weights fitted on every question (every query, added when it names an entity):")
    for j, name in enumerate(hybrid.RANK_WEIGHTS):
        print(f'    "{name}": ({run["final"][j]:+.3f}, {run["final"][j + n]:+.3f}),')


if __name__ == "__main__":
    main()
