"""bench/fusion.py re-ranks recorded candidate lists with the product's own fuse."""

from __future__ import annotations

import uuid

import pytest

from bench.fusion import FusionTap, constants, refuse
from bench.ranking_cv import choose, complexity
from memories.search import hybrid as search
from memories.search.hybrid import Candidate


def _candidates(*labels: str) -> list[Candidate]:
    ends = (uuid.uuid4(), uuid.uuid4())
    return [Candidate(label, 0.9 - n / 100, *ends) for n, label in enumerate(labels)]


def test_tap_records_what_fuse_got_and_answers_as_fuse(monkeypatch):
    monkeypatch.setattr(search, "fuse", search.fuse)
    tap = FusionTap(search).install()
    hits = search.fuse(_candidates("a", "b"), _candidates("b"), 2)
    assert [h.fact_id for h in hits] == ["b", "a"]
    recorded = tap.take_one()
    assert [c.fact_id for c in recorded.vector] == ["a", "b"] and recorded.top_k == 2
    with pytest.raises(RuntimeError, match="one call"):
        tap.take_one()


def test_refuse_changes_the_order_and_restores_the_constants():
    from bench.fusion import Recorded

    # "t" is first for words only; "v1" and "v2" lead the vector list.
    recorded = Recorded(_candidates("v1", "v2", "t"), _candidates("t", "v2"), set(), 3)
    before = (search.RRF_K, search.TEXT_WEIGHT, search.LEARNED_RANKING)
    first_stage = {"LEARNED_RANKING": False}
    assert refuse(search, search.fuse, recorded, {"TEXT_WEIGHT": 3.0} | first_stage)[0] == "t"
    assert refuse(search, search.fuse, recorded, {"TEXT_WEIGHT": 0.1} | first_stage)[0] == "v2"
    assert before == (search.RRF_K, search.TEXT_WEIGHT, search.LEARNED_RANKING)
    with pytest.raises(ValueError, match="BM25_K1"), constants(search, {"BM25_K1": 2.0}):
        pass


def test_the_simplest_rule_prefers_textbook_fusion_within_noise():
    grid = [{"RRF_K": 60, "TEXT_WEIGHT": 1.0, "ENTITY_WEIGHT": 0.0},
            {"RRF_K": 5, "TEXT_WEIGHT": 1.0, "ENTITY_WEIGHT": 0.0},
            {"RRF_K": 10, "TEXT_WEIGHT": 1.0, "ENTITY_WEIGHT": 0.0}]
    assert complexity(grid[0]) < complexity(grid[2]) < complexity(grid[1])
    # Setting 1 wins two questions and loses one of twenty: within one standard error.
    scores = {0: [0.0, 0.0, 1.0] + [1.0] * 17, 1: [1.0, 1.0, 0.0] + [1.0] * 17, 2: [0.0] * 20}
    index = list(range(20))
    assert choose(scores, index, grid, "best") == 1
    assert choose(scores, index, grid, "simplest") == 0
    # A clear win is kept.
    scores[0] = [1.0] * 10 + [0.0] * 10
    assert choose(scores, index, grid, "simplest") == 1


def test_the_guard_keeps_settings_that_hold_on_every_guarding_set_and_sets_count_alike():
    from bench.ranking_cv import guarded, objective, pick

    # Positions 0-1: the dialogue set; 2-3 and 4-5: two non-dialogue sets.
    parts = [[0, 1], [2, 3], [4, 5]]
    scores = {0: [1.0, 1.0, 1.0, 1.0, 0.0, 0.0], 1: [0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
              2: [1.0, 0.0, 1.0, 1.0, 1.0, 0.0]}
    assert objective(scores[0], parts) == objective(scores[1], parts) == 2 / 3
    # Setting 0 holds on the first guarding set only.
    assert guarded(scores, [(parts[1], 1.0), (parts[2], 0.5)]) == [1, 2]
    # When no setting holds, the guard gives way rather than choosing nothing.
    assert guarded(scores, [(parts[1], 2.0)]) == [0, 1, 2]
    # `guarded` takes the best dialogue recall among the settings that hold vector alone's
    # recall on every other set; `both` the best mean of all three sets.
    grid = [{"RRF_K": k} for k in (10, 20, 60)]
    train = {"locomo": parts[0], "runbooks": parts[1], "pyfaq": parts[2]}
    vector = [0.0, 0.0, 1.0, 1.0, 0.5, 0.5]
    assert pick(scores, grid, train, vector, "guarded", "best") == 2
    scores[1] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert pick(scores, grid, train, vector, "guarded", "best") == 1
    assert pick(scores, grid, train, vector, "both", "best") == 1


def test_episode_folds_keep_questions_about_one_record_together():
    from bench.ranking_cv import episode_folds
    from bench.ranking_cv_recording import COLLECTIONS

    rows = [{"evidence": ["inc-2041-01"]}, {"evidence": ["inc-2041-02", "rb-014-01"]},
            {"evidence": ["rb-014-03"]}, {"evidence": ["adr-007-01"]}]
    folds, by_episode = episode_folds(rows, [0, 1, 2, 3], COLLECTIONS["runbooks"].folder,
                                      folds=2)
    # Question 1 ties INC-2041 to RB-014, so the first three share a fold.
    assert folds[0] == folds[1] == folds[2] != folds[3]
    assert by_episode == {"INC-2041": folds[0], "RB-014": folds[0], "ADR-007": folds[3]}
    # Each set's own folder says which episode a fact is of: two answers of one FAQ entry.
    rows = [{"evidence": ["faq-general-005-01", "faq-general-005-02"]},
            {"evidence": ["faq-general-001-01"]}, {"evidence": ["faq-general-005-02"]}]
    folds, _ = episode_folds(rows, [0, 1, 2], COLLECTIONS["pyfaq"].folder, folds=2)
    assert folds[0] == folds[2] != folds[1]


def test_a_question_repeated_from_another_set_keeps_that_questions_fold():
    from bench.ranking_cv import origin_folds

    rows = [{"group": "mixed-01", "origin": ("locomo", "conv-30")},
            {"group": "mixed-01", "origin": ("runbooks", "RB-014")},
            {"group": "mixed-02", "origin": ("pyfaq", "faq-general-001")},
            {"group": "mixed-02", "origin": ("runbooks", "INC-2041")}]
    folds = origin_folds(rows, [0, 1, 2, 3], ["conv-26", "conv-30"],
                         {"runbooks": {"RB-014": 4, "INC-2041": 3}}, folds=5)
    # pyfaq is not in the run: its question falls back to its memory's fold.
    assert folds == {0: 1, 1: 4, 2: 1, 3: 3}
