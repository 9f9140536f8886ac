"""The learned order of the pool (memories.search.hybrid.RANK_WEIGHTS): fitted and
cross-validated on ranking_cv's recording (bench/ranking_cv.py runs it and prints the
figures and the weights fitted on every question).

Per question, every candidate of the pool (the union of the two lists fuse is handed)
gets hybrid.rank_features, the product's own; a linear model scores them. The product's
form (KEPT) has two weights a feature: one for every query, one added when the query
names an entity of the memory. Its loss is the softmax over each question's pool of its
evidence (ListNet with the evidence equally likely), every question counting the same,
with an L2 penalty; fitted by Newton's method with a backtracking line search (numpy
only: a few dozen weights, no package needed). Five folds, exactly bench/ranking_cv.py's
(LoCoMo by conversation, the other sets by episode, a mixed question in its origin's
fold): fitted on four, scored on the fifth.

The form itself was chosen among FORMS on those same held-out folds, so its held-out
figures carry that choice. The nested figures remove it: for each fold the form is chosen
by an inner cross-validation on the other four (`choose_form`, the rule of ranking_cv's
`guarded`), fitted on the four and scored on the fifth.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.ranking_cv_recording import DIALOGUE

# The penalty: with one weight a feature, 0.1 gave back most of the gain on LoCoMo and lost
# on the FAQ (held out 0.802 and 0.784 against 0.816 and 0.866 for the kept form), 0.001
# gained less on LoCoMo (0.807); with two, 0.1 0.807 and 0.824, 0.001 0.814 and 0.869.
LAMBDA = 0.01
DEPTH = 10


@dataclass(frozen=True)
class Form:
    """A way to fit the order: which features, which query flags add a weight per feature
    (QUERY_FLAGS), the loss, the penalty, and how much each question counts."""

    name: str
    interactions: tuple[str, ...] = ("named",)
    lam: float = LAMBDA
    loss: str = "softmax"  # or "pairwise": logistic over (evidence, other) pairs
    weighting: str = "question"  # "question", "set" (each set the same) or "locomo2"
    # The product's features (or only these), less `drop`, plus `extra` (EXTRA_FEATURES).
    only: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


# The form the product ships (hybrid.RANK_WEIGHTS: per feature, every query and named).
KEPT = Form("kept: named, softmax, L2 0.01")
# extra_features, in two groups.
PRODUCTS = ("cxc", "bxc", "nbcos", "nbcov")
EPISODE = ("epf", "epn", "epcos")
EXTRA_FEATURES = PRODUCTS + EPISODE
# The forms compared when the learned order was built, the kept one first (it wins ties):
# `nested` chooses among them (docs/benchmarks.md, "Learned order").
FORMS = (
    KEPT,
    Form("rrf score alone", interactions=(), only=("fused",)),
    Form("one weight", interactions=()),
    Form("one weight, no rrf score", interactions=(), drop=("fused",)),
    Form("one weight, each set the same", interactions=(), weighting="set"),
    Form("one weight, LoCoMo double", interactions=(), weighting="locomo2"),
    Form("one weight, L2 0.1", interactions=(), lam=0.1),
    Form("one weight, L2 0.001", interactions=(), lam=0.001),
    Form("one weight, pairwise", interactions=(), loss="pairwise"),
    Form("named, each set the same", weighting="set"),
    Form("named, pairwise", loss="pairwise"),
)
# Tried after the order shipped (issue 42, "recall that generalizes"; ranking_cv --tried):
# a third weight per feature when the question asks for a time (QUERY_FLAGS; fuse is not
# handed the query, so the product would need it), and features from what fuse already
# receives (extra_features). None was kept (docs/benchmarks.md, "Learned order").
TRIED = (
    Form("named+when", interactions=("named", "when")),
    Form("named+when, L2 0.03", interactions=("named", "when"), lam=0.03),
    Form("named + cos*cov, bm25*cov", extra=("cxc", "bxc")),
    Form("named + neighbours' best cos, cov", extra=("nbcos", "nbcov")),
    Form("named + the four", extra=PRODUCTS),
    Form("named+when + the four", interactions=("named", "when"), extra=PRODUCTS),
    Form("named + episode's fused, count", extra=("epf", "epn")),
    Form("named + episode's best cos", extra=("epcos",)),
    Form("named + episode's three", extra=EPISODE),
    Form("named + the four + episode's three", extra=PRODUCTS + EPISODE),
    Form("named+when + the four + episode's three", interactions=("named", "when"),
         extra=PRODUCTS + EPISODE),
)

# "When did Caroline go to the LGBTQ support group?": the question asks for a time.
_WHEN = re.compile(r"^\s*(when\b|what (year|month|day|date|time)\b|how long ago\b|"
                   r"which (year|month|day)\b)", re.IGNORECASE)

# Flags of the query a form can interact with (a weight per feature added when it holds).
QUERY_FLAGS = {
    "named": lambda row: bool(row["recorded"].mentioned),
    "when": lambda row: bool(_WHEN.search(row.get("question") or "")),
}


def extra_features(hits, vector, text, mentioned) -> dict:
    """Per hit, features tried beside the product's, from what fuse receives (its
    arguments as rank_features has them): cosine x coverage, BM25 share x coverage, the
    best cosine and coverage among its episode neighbours (NEIGHBOUR_SPAN), and over the
    other candidates of its episode: their fused scores (over the best, / 5), how many
    (/ 10), their best cosine."""
    from memories.search import hybrid

    cosine = {c.fact_id: c.score for c in vector}
    coverage = {c.fact_id: 1.0 if c.coverage is None else c.coverage for c in text}
    bm25 = {c.fact_id: c.score for c in text}
    best_bm25 = max(bm25.values(), default=1.0) or 1.0
    candidate: dict = {}
    for c in (*vector, *text):
        candidate.setdefault(c.fact_id, c)
    neighbours = hybrid.episode_neighbours(candidate)
    fused = {h.fact_id: h.fused for h in hits}
    best_fused = max(fused.values(), default=1.0) or 1.0
    episode: dict = {}
    for c in candidate.values():
        if c.episode_id is not None:
            episode.setdefault(c.episode_id, []).append(c.fact_id)
    out = {}
    for hit in hits:
        i, c = hit.fact_id, candidate[hit.fact_id]
        near = neighbours[i]
        same = [j for j in episode.get(c.episode_id, ()) if j != i]
        cos, cov = cosine.get(i, 0.0), coverage.get(i, 0.0)
        out[i] = {
            "epf": sum(fused[j] for j in same) / best_fused / 5,
            "epn": len(same) / 10,
            "epcos": max((cosine.get(j, 0.0) for j in same), default=0.0),
            "cxc": cos * cov,
            "bxc": bm25.get(i, 0.0) / best_bm25 * cov,
            "nbcos": max((cosine.get(j, 0.0) for j in near), default=0.0),
            "nbcov": max((coverage.get(j, 0.0) for j in near), default=0.0),
        }
    return out



@dataclass
class Data:
    """Every question's pool, stacked: one row per candidate (the product's features, then
    EXTRA_FEATURES), `group` its question; per question its flags, set, and evidence count."""

    names: list[str]
    x: np.ndarray
    y: np.ndarray
    group: np.ndarray
    flags: dict[str, np.ndarray]
    sets: list[str]
    evidence: np.ndarray
    starts: np.ndarray  # each question's first row


def pools(rows: list[dict]) -> Data:
    """The pools of `rows` in the product's reciprocal-rank order (LEARNED_RANKING off)."""
    from memories.search import hybrid

    names = [*hybrid.RANK_WEIGHTS, *EXTRA_FEATURES]
    xs, ys, groups = [], [], []
    for q, row in enumerate(rows):
        recorded = row["recorded"]
        vector = [c for c in recorded.vector if c.score >= hybrid.VECTOR_FLOOR]
        saved = hybrid.LEARNED_RANKING
        hybrid.LEARNED_RANKING = False
        try:
            hits = hybrid.fuse(recorded.vector, recorded.text, 10**6, recorded.mentioned)
        finally:
            hybrid.LEARNED_RANKING = saved
        features = hybrid.rank_features(hits, vector, recorded.text, recorded.mentioned)
        extra = extra_features(hits, vector, recorded.text, recorded.mentioned)
        evidence = set(row["evidence"])
        xs.append(np.array([[(features[h.fact_id] | extra[h.fact_id])[n] for n in names]
                            for h in hits], dtype=float).reshape(len(hits), len(names)))
        ys.append(np.array([str(h.fact_id) in evidence for h in hits], dtype=float))
        groups.append(np.full(len(hits), q))
    sizes = np.array([len(y) for y in ys])
    return Data(names, np.vstack(xs), np.concatenate(ys), np.concatenate(groups),
                {flag: np.array([test(row) for row in rows], dtype=float)
                 for flag, test in QUERY_FLAGS.items()},
                [row["set"] for row in rows],
                np.array([len(row["evidence"]) for row in rows], dtype=float),
                np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int))


def design(data: Data, form: Form) -> np.ndarray:
    """The form's columns: its features, then the same times each of its query flags."""
    product = [n for n in data.names if n not in EXTRA_FEATURES]
    keep = [n for n in form.only or product if n not in form.drop]
    columns = [data.names.index(n) for n in (*keep, *form.extra)]
    x = data.x[:, columns]
    return np.hstack([x, *(x * data.flags[flag][data.group][:, None]
                           for flag in form.interactions)])


def _rows_of(data: Data, questions: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.isin(data.group, questions))


def fit(data: Data, x: np.ndarray, questions, form: Form, iterations: int = 50) -> np.ndarray:
    """Weights minimizing the form's mean loss over `questions` plus lam/2 |w|^2."""
    questions = np.asarray(sorted(questions))
    positive = np.bincount(data.group, weights=data.y, minlength=len(data.sets))
    sizes = np.bincount(data.group, minlength=len(data.sets))
    usable = questions[(positive[questions] > 0) & (positive[questions] < sizes[questions])]
    d = x.shape[1]
    if not len(usable):
        return np.zeros(d)
    share = np.ones(len(usable))
    sets = np.array(data.sets)[usable]
    if form.weighting == "set":
        for name in set(sets):
            share[sets == name] = 1 / (sum(sets == name) * len(set(sets)))
    else:
        if form.weighting == "locomo2":
            share[sets == DIALOGUE] = 2
        share /= share.sum()
    if form.loss == "pairwise":
        return _fit_pairwise(data, x, usable, share, form.lam, iterations)
    rows = _rows_of(data, usable)
    xs, ys, g = x[rows], data.y[rows], np.searchsorted(usable, data.group[rows])
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    t = ys / np.add.reduceat(ys, starts)[g]

    c = share[g]

    def loss(w, derivatives=True):
        s = xs @ w
        s = s - np.maximum.reduceat(s, starts)[g]
        e = np.exp(s)
        z = np.add.reduceat(e, starts)
        total = 0.5 * form.lam * w @ w + share @ np.log(z) - (c * t) @ s
        if not derivatives:
            return total
        p = e / z[g]
        grad = form.lam * w + xs.T @ (c * (p - t))
        mu = np.add.reduceat(xs * p[:, None], starts)
        hess = (form.lam * np.eye(d) + (xs * (c * p)[:, None]).T @ xs
                - (mu * share[:, None]).T @ mu)
        return total, grad, hess

    return _newton(loss, d, iterations)


def _pairs(data: Data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (evidence, other) pair of candidates of a question: rows, rows, question."""
    if not hasattr(data, "_pairs"):
        ends = np.append(data.starts[1:], len(data.y))
        left, right, question = [], [], []
        for q, (a, b) in enumerate(zip(data.starts, ends, strict=True)):
            good = a + np.flatnonzero(data.y[a:b] > 0)
            bad = a + np.flatnonzero(data.y[a:b] == 0)
            left.append(np.repeat(good, len(bad)))
            right.append(np.tile(bad, len(good)))
            question.append(np.full(len(good) * len(bad), q))
        data._pairs = tuple(map(np.concatenate, (left, right, question)))
    return data._pairs


def _fit_pairwise(data: Data, x: np.ndarray, usable: np.ndarray, share: np.ndarray,
                  lam: float, iterations: int) -> np.ndarray:
    """Logistic loss of every (evidence, other) pair of a question, each question's pairs
    sharing its weight."""
    left, right, question = _pairs(data)
    keep = np.isin(question, usable)
    left, right, question = left[keep], right[keep], question[keep]
    q = np.searchsorted(usable, question)
    weight = share[q] / np.bincount(q, minlength=len(usable))[q]
    diff = x[left] - x[right]
    d = x.shape[1]

    def loss(w, derivatives=True):
        m = diff @ w
        total = 0.5 * lam * w @ w + weight @ np.logaddexp(0, -m)
        if not derivatives:
            return total
        sig = 1 / (1 + np.exp(m))  # sigmoid(-m)
        grad = lam * w - diff.T @ (weight * sig)
        hess = lam * np.eye(d) + (diff * (weight * sig * (1 - sig))[:, None]).T @ diff
        return total, grad, hess

    return _newton(loss, d, iterations)


def _newton(loss, d: int, iterations: int) -> np.ndarray:
    """Newton's method with a backtracking line search; `loss(w, derivatives)` gives the
    value, and with derivatives (value, gradient, Hessian)."""
    w = np.zeros(d)
    value, grad, hess = loss(w)
    for _ in range(iterations):
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:
            new = loss(w - t * step, False)
            if new <= value - 1e-4 * t * (grad @ step) or t < 1e-6:
                break
            t /= 2
        w = w - t * step
        if np.abs(t * step).max() < 1e-6:
            break
        value, grad, hess = loss(w)
    return w


def recalls(data: Data, x: np.ndarray, w: np.ndarray, questions) -> dict[int, float]:
    """recall@10 of each question when its pool is ordered by x @ w (stable, as fuse)."""
    out = {}
    score = x @ w
    ends = np.append(data.starts[1:], len(data.y))
    for q in questions:
        a, b = data.starts[q], ends[q]
        top = np.argsort(-score[a:b], kind="stable")[:DEPTH]
        out[q] = float(data.y[a:b][top].sum() / data.evidence[q])
    return out


def first_stage(data: Data) -> dict[int, float]:
    """recall@10 of the pool's own order: reciprocal-rank fusion alone."""
    return recalls(data, np.zeros((len(data.y), 1)), np.zeros(1), range(len(data.sets)))


class Folds:
    """A form's fits on every set of folds held out, each made once."""

    def __init__(self, data: Data, fold: dict[int, int], form: Form) -> None:
        self.data, self.fold, self.form = data, fold, form
        self.x = design(data, form)
        self.fits: dict[frozenset, np.ndarray] = {}

    def weights(self, out: frozenset) -> np.ndarray:
        if out not in self.fits:
            train = [q for q in range(len(self.data.sets)) if self.fold[q] not in out]
            self.fits[out] = fit(self.data, self.x, train, self.form)
        return self.fits[out]

    def held(self, out: frozenset, scored: int) -> dict[int, float]:
        """recall@10 of fold `scored`'s questions, fitted without the folds `out`."""
        return recalls(self.data, self.x, self.weights(out),
                       [q for q in range(len(self.data.sets)) if self.fold[q] == scored])


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def choose_form(held: dict[str, dict[int, float]], baseline: dict[int, float],
                sets: list[str], questions: list[int]) -> str:
    """ranking_cv's `guarded` rule over forms: the highest LoCoMo recall@10 (over
    `questions`, per form in `held`) among the forms that lose to reciprocal-rank fusion
    alone on no other set; every form when none passes. Ties go to the first form."""
    by_set: dict[str, list[int]] = {}
    for q in questions:
        by_set.setdefault(sets[q], []).append(q)
    passing = [name for name, scores in held.items()
               if all(_mean(scores[q] for q in index) >= _mean(baseline[q] for q in index) - 1e-12
                      for name_, index in by_set.items() if name_ != DIALOGUE)]
    allowed = passing or list(held)
    dialogue = by_set.get(DIALOGUE, [])
    return max(allowed, key=lambda name: (_mean(held[name][q] for q in dialogue),
                                          -list(held).index(name)))


def cross_validate(rows: list[dict], fold: dict[int, int], folds: int = 5,
                   tried: bool = False) -> dict:
    """recall@10 per question, by question index: the kept form's `held` (weights fitted
    on the other folds), `in_sample` (fitted on all) and those weights (`final`); `nested`
    (the form too chosen among FORMS per fold on the other four, by inner folds; `chosen`
    per fold, `chosen_on_all` by the five folds' held-out figures); every form's held-out
    and in-sample figures (`forms`); with `tried`, TRIED's forms too, and `tried` holds
    the nested figures of FORMS and TRIED together."""
    return evaluate(pools(rows), fold, folds, FORMS, TRIED if tried else ())


def evaluate(data: Data, fold: dict[int, int], folds: int = 5,
             forms: tuple[Form, ...] = FORMS, tried: tuple[Form, ...] = ()) -> dict:
    """cross_validate on pools already made."""
    n = len(data.sets)
    baseline = first_stage(data)
    runs = {form.name: Folds(data, fold, form) for form in (*forms, *tried)}
    held = {name: {} for name in runs}
    for k in range(folds):
        for name, run in runs.items():
            held[name] |= run.held(frozenset({k}), k)
    in_sample = {name: recalls(data, run.x, run.weights(frozenset()), range(n))
                 for name, run in runs.items()}
    kept = runs[KEPT.name]
    out = {"held": held[KEPT.name], "in_sample": in_sample[KEPT.name],
           "final": kept.weights(frozenset()), "rrf": baseline,
           "forms": {name: {"held": held[name], "in_sample": in_sample[name]}
                     for name in runs}}
    out |= _nested({form.name: runs[form.name] for form in forms}, held, baseline, fold,
                   folds)
    if tried:
        out["tried"] = _nested(runs, held, baseline, fold, folds)
    return out


def _nested(runs: dict[str, Folds], held: dict, baseline: dict[int, float],
            fold: dict[int, int], folds: int) -> dict:
    """Per outer fold, the form `choose_form` picks from inner folds on the other four,
    fitted on the four and scored on the fifth; and the form it picks on all five."""
    sets = next(iter(runs.values())).data.sets
    n = len(sets)
    nested, chosen = {}, []
    for k in range(folds):
        outer = [q for q in range(n) if fold[q] != k]
        inner = {name: {} for name in runs}
        for j in range(folds):
            if j != k:
                for name, run in runs.items():
                    inner[name] |= run.held(frozenset({k, j}), j)
        pick = choose_form(inner, baseline, sets, outer)
        chosen.append(pick)
        nested |= {q: held[pick][q] for q in range(n) if fold[q] == k}
    on_all = choose_form({name: held[name] for name in runs}, baseline, sets, list(range(n)))
    return {"nested": nested, "chosen": chosen, "chosen_on_all": on_all}
