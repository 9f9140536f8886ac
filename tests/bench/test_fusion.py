"""bench/fusion.py re-ranks recorded candidate lists with the product's own fuse."""

from __future__ import annotations

import uuid

import pytest

from bench.fusion import FusionTap, constants, refuse
from bench.ranking_cv import choose, complexity
from memories import search
from memories.search import Candidate


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
    before = (search.RRF_K, search.TEXT_WEIGHT)
    assert refuse(search, search.fuse, recorded, {"TEXT_WEIGHT": 3.0})[0] == "t"
    assert refuse(search, search.fuse, recorded, {"TEXT_WEIGHT": 0.1})[0] == "v2"
    assert before == (search.RRF_K, search.TEXT_WEIGHT)
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
