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

Neither list sees a paraphrase whose note the embedding ranks just out of reach: it
shares no word with its note. Near words do (memories/search/note_words.py), so a note also
gets WORD_WEIGHT times its word match: the mean over the question's words of the
similarity of the note's nearest word, where that reaches WORD_THRESHOLD.

The constants were chosen by grouped cross-validation on the note set
(bench/notes_fusion.py; docs/benchmarks.md, "Note search quality").
"""

from __future__ import annotations

from memories.search.hybrid import VECTOR_FLOOR, Candidate, Hit
from memories.search.note_words import WordMatch

TEXT_WEIGHT = 0.3
COVERAGE_FLOOR = 0.8
WORD_WEIGHT = 0.2
WORD_THRESHOLD = 0.45


def fuse_notes(vector: list[Candidate], text: list[Candidate], top_k: int,
               words: list[WordMatch] = (), *,
               text_weight: float | None = None, coverage_floor: float | None = None,
               word_weight: float | None = None,
               word_threshold: float | None = None) -> list[Hit]:
    """The top_k notes by cosine + text_weight * (coverage - coverage_floor, if positive)
    + word_weight * word match.

    The keyword arguments exist for the cross-validation bench; the product passes none.
    """
    weight = TEXT_WEIGHT if text_weight is None else text_weight
    floor = COVERAGE_FLOOR if coverage_floor is None else coverage_floor
    near_weight = WORD_WEIGHT if word_weight is None else word_weight
    threshold = WORD_THRESHOLD if word_threshold is None else word_threshold
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
    for match in words if near_weight else ():
        # Only notes one of the lists found: the word match reorders, it does not retrieve.
        if match.note_id in hits:
            hits[match.note_id].fused += near_weight * match.coverage(threshold)
    ranked = sorted(hits.values(),
                    key=lambda h: (-h.fused, -(h.cosine or -1.0), -(h.bm25 or 0.0)))[:top_k]
    for rank, hit in enumerate(ranked, start=1):
        hit.rank = rank
    return ranked
