"""How memory_search ranks notes: meaning first, words when they explain the question.

Notes are few (hundreds per project) and written in full sentences, so the vector
list is strong on its own; what words add is the pasted identifier (an error message,
a file, a setting) that the embedding blurs with its neighbours. Rank fusion (what
query_memory uses for facts) gives a word match on a common word the same vote as a
first place by meaning, and on the note set that cost paraphrased questions half their
recall. So a note's score is its cosine plus a bonus for the share of the question's
weight its words cover, counted only above a floor: a note that shares one or two
ordinary words with a question gets nothing, one that holds the pasted error message
gets up to TEXT_WEIGHT.

The two constants were chosen by grouped cross-validation on the note set
(bench/notes_fusion.py; docs/benchmarks.md, "Note search quality").
"""

from __future__ import annotations

from memories.search import VECTOR_FLOOR, Candidate, Hit

TEXT_WEIGHT = 0.5
COVERAGE_FLOOR = 0.7


def fuse_notes(vector: list[Candidate], text: list[Candidate], top_k: int, *,
               text_weight: float | None = None,
               coverage_floor: float | None = None) -> list[Hit]:
    """The top_k notes by cosine + text_weight * (coverage - coverage_floor, if positive).

    The keyword arguments exist for the cross-validation bench; the product passes none.
    """
    weight = TEXT_WEIGHT if text_weight is None else text_weight
    floor = COVERAGE_FLOOR if coverage_floor is None else coverage_floor
    hits: dict = {}
    for candidate in vector:
        if candidate.score < VECTOR_FLOOR:
            continue
        hit = hits.setdefault(candidate.fact_id, Hit(candidate.fact_id))
        hit.cosine = candidate.score
        hit.matched.append("vector")
        hit.fused += candidate.score
    for candidate in text:
        hit = hits.setdefault(candidate.fact_id, Hit(candidate.fact_id))
        hit.bm25 = candidate.score
        hit.matched.append("text")
        hit.fused += weight * max(0.0, (candidate.coverage or 0.0) - floor)
    ranked = sorted(hits.values(),
                    key=lambda h: (-h.fused, -(h.cosine or -1.0), -(h.bm25 or 0.0)))[:top_k]
    for rank, hit in enumerate(ranked, start=1):
        hit.rank = rank
    return ranked
