"""Choosing memory_search's note fusion by grouped cross-validation (issue 12).

bench/notes_quality.py --cv calls `cross_validate` with each question's two candidate
lists, exactly as memory_search handed them to `memories.notes.ranking.fuse_notes`, and
re-fuses them offline for every setting of the grid, with the product's own function.

Folds group questions by the notes they are about (questions sharing an evidence note
are one group), so no note is tuned on and then reported on. In each fold the setting
with the best training recall@5 is chosen, then MRR, then the simpler one (smaller
weights; both zero is vector alone); the held-out figures score every question once, by
a setting chosen without it. The in-sample figures are the setting chosen on all
questions, scored on all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

TEXT_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
COVERAGE_FLOORS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
WORD_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5)
WORD_THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
FOLDS = 5
METRICS = ("r@1", "r@5", "r@10", "mrr")


@dataclass(frozen=True)
class Setting:
    text_weight: float
    coverage_floor: float
    word_weight: float = 0.0
    word_threshold: float = 0.0

    def label(self) -> str:
        parts = [f"text weight {self.text_weight}, coverage floor {self.coverage_floor}"
                 if self.text_weight else "text weight 0"]
        if self.word_weight:
            parts.append(f"word weight {self.word_weight}, threshold {self.word_threshold}")
        if not self.text_weight and not self.word_weight:
            return "vector alone (both weights 0)"
        return "; ".join(parts)

    def weights(self) -> dict[str, float]:
        return vars(self)


@dataclass(frozen=True)
class Question:
    """One question's candidate lists (memories.search.candidates.Candidate) and evidence
    (set ids)."""

    id: str
    kind: str
    evidence: tuple[str, ...]
    vector: list
    text: list
    words: list = ()


def grid() -> list[Setting]:
    # With a weight of 0 its floor or threshold means nothing: one setting, not many.
    text = [(0.0, 0.0), *product(TEXT_WEIGHTS[1:], COVERAGE_FLOORS)]
    words = [(0.0, 0.0), *product(WORD_WEIGHTS[1:], WORD_THRESHOLDS)]
    return [Setting(*t, *w) for t, w in product(text, words)]


def folds_of(questions: Sequence[Question], folds: int = FOLDS) -> list[int]:
    """A fold number per question; questions that share an evidence note share a fold."""
    parent: dict[str, str] = {}

    def root(item: str) -> str:
        while parent.setdefault(item, item) != item:
            item = parent[item]
        return item

    for question in questions:
        first = root(question.evidence[0])
        for other in question.evidence[1:]:
            parent[root(other)] = first
    groups = sorted({root(q.evidence[0]) for q in questions})
    fold_of_group = {group: index % folds for index, group in enumerate(groups)}
    return [fold_of_group[root(q.evidence[0])] for q in questions]


def cross_validate(questions: Sequence[Question], fuse: Callable, depth: int,
                   score: Callable, id_of: Callable) -> dict:
    """`fuse(vector, text, depth, words, **Setting.weights())` ranks; `id_of(hit)` is
    the set id of a ranked hit; `score(ranked_ids, evidence)` gives METRICS."""
    settings = grid()
    scores = [[score([id_of(h) for h in fuse(q.vector, q.text, depth, q.words,
                                              **s.weights())],
                     list(q.evidence)) for s in settings] for q in questions]
    fold = folds_of(questions)
    everything = list(range(len(questions)))

    def best(indices: list[int], allowed: list[int]) -> int:
        def key(i: int):
            mean = {m: sum(scores[q][i][m] for q in indices) / len(indices)
                    for m in ("r@5", "mrr")}
            return (round(mean["r@5"], 9), round(mean["mrr"], 9),
                    -settings[i].text_weight - settings[i].word_weight,
                    settings[i].coverage_floor, settings[i].word_threshold)
        return max(allowed, key=key)

    def held_out(allowed: list[int]) -> tuple[list, list[dict[str, float]]]:
        rows: list = [None] * len(questions)
        chosen = []
        for k in range(FOLDS):
            test = [i for i, f in enumerate(fold) if f == k]
            pick = best([i for i, f in enumerate(fold) if f != k], allowed)
            chosen.append((k, len(test), settings[pick]))
            for i in test:
                rows[i] = scores[i][pick]
        return chosen, rows

    full = list(range(len(settings)))
    per_fold, rows = held_out(full)
    overall = best(everything, full)
    vector_alone = settings.index(Setting(0.0, 0.0))
    # The same choice within parts of the grid, to show what each signal adds.
    ablations = {
        "held out, no near words": [i for i in full if not settings[i].word_weight],
        "held out, no full text": [i for i in full if not settings[i].text_weight],
    }
    return {
        "chosen": settings[overall],
        "per_fold": per_fold,
        "held_out": _by_kind(questions, rows),
        "in_sample": _by_kind(questions, [s[overall] for s in scores]),
        "vector_alone": _by_kind(questions, [s[vector_alone] for s in scores]),
        "ablations": {name: _by_kind(questions, held_out(allowed)[1])
                      for name, allowed in ablations.items()},
    }


def _by_kind(questions: Sequence[Question], rows: list) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for group in [*sorted({q.kind for q in questions}), "overall"]:
        picked = [r for q, r in zip(questions, rows, strict=True) if group in ("overall", q.kind)]
        out[group] = {m: sum(r[m] for r in picked) / len(picked) for m in METRICS}
    return out


def print_report(result: dict) -> None:
    print(f"\nNote fusion by {FOLDS}-fold cross-validation (questions grouped by note), "
          f"{len(grid())} settings:")
    for k, size, setting in result["per_fold"]:
        print(f"  fold {k} ({size:>2} questions held out): chose {setting.label()}")
    print(f"  on all questions: {result['chosen'].label()}\n")
    print(f"{'':<28}" + "".join(f"{m:>8}" for m in METRICS))
    rows = {name.replace("_", " "): result[name] for name in
            ("held_out", "in_sample", "vector_alone")} | result["ablations"]
    for name, figures in rows.items():
        row = figures["overall"]
        print(f"{name:<28}" + "".join(f"{row[m]:>8.3f}" for m in METRICS))
