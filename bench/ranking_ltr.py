"""The learned order of the pool (memories.search.hybrid.RANK_WEIGHTS): fitted and
cross-validated on ranking_cv's recording (bench/ranking_cv.py runs it and prints the
figures and the weights fitted on every question).

Per question, every candidate of the pool (the union of the two lists fuse is handed)
gets hybrid.rank_features, the product's own; a linear model scores them, with two
weights a feature: one for every query, one added when the query names an entity of the
memory. The loss is the softmax over each question's pool of its
evidence (ListNet with the evidence equally likely), every question counting the same,
with an L2 penalty; fitted by Newton's method with a backtracking line search (numpy
only: a few dozen weights, no package needed). Five folds, exactly bench/ranking_cv.py's
(LoCoMo by conversation, the other sets by episode, a mixed question in its origin's
fold): fitted on four, scored on the fifth.
"""

from __future__ import annotations

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

