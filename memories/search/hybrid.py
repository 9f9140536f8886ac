"""Hybrid recall: BM25 over Postgres full text and pgvector cosine, fused by rank.

Full text: candidates come from the GIN index, restricted to the query's more
selective words so a common word cannot drag in half the memory (when every word
is common, to facts that have the two rarest together); each candidate
is scored with BM25 (term frequency taken as 1, which holds for sentence-length
facts) using per-partition document frequencies kept by the indexer, a query word
only the facts written just before it hold counting a share
(candidates.CONTEXT_WORD_WEIGHT).
Vectors: the HNSW index with iterative scans, so filtering by memory and
partition still yields enough neighbours.
Fusion: weighted reciprocal rank fusion, plus a bonus for facts about an entity the
query names and a smaller one for facts written beside other candidates; a word match
votes only when it covers enough of the question.

The two lists are read in candidates.py, through window.py's Window; this module fuses
them (bench/fusion.py and bench/ranking_cv.py set and hash its fusion constants here).
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass, field

import numpy as np

from echomem import bulk
from memories.core.names import normalize
from memories.search.candidates import Candidate

# Reciprocal rank fusion constant. The usual 60 flattens the top of two 50-long lists so
# much that agreement on mediocre hits beats a clear first place; 10 won on LoCoMo dev
# (docs/benchmarks.md has the sweep). Issue 42's cross-validation over three sets chose
# k 5, entity 1, floor 0.2, neighbour 0.2 (held-out LoCoMo 0.793 against 0.791 for these
# constants with the same vectors), but on a small memory of unrelated facts in one
# episode that put a fact first for its neighbours and its context's words ("who teaches
# Grace about compilers" -> "The full disk caused the outage", tests/web/test_explorer.py):
# kept as they were until the sets hold such memories (docs/benchmarks.md, "Ranking with
# the graph").
RRF_K = 10
VECTOR_WEIGHT = 1.0
TEXT_WEIGHT = 1.0
# A fact query_memory has just embedded is ranked by the better of its settled cosine and its
# first-pass one less this margin: a self-contained fact embedded with unrelated neighbours as
# context can score far below what it says alone (docs/engine.md, "Read-your-writes").
FIRST_PASS_MARGIN = 0.1
# Below this cosine a neighbour is noise for MiniLM: it may not outvote a word match.
VECTOR_FLOOR = 0.15
# Bonus, in units of a first place, for facts whose subject (source entity) the query
# names: "What does Melanie do to destress?" is about Melanie's facts first.
ENTITY_WEIGHT = 0.5
# A word match votes in the fusion only when it covers this share of the question's
# weight (Candidate.coverage; a word of its context counts CONTEXT_WORD_WEIGHT). Below it
# the match is one or two incidental words: when a question is paraphrased, such matches
# fill the word list and, with a vote each, push the vector list's right answer out of
# the top (on the runbooks set the hybrid fell to
# recall@10 0.615, under vectors alone at 0.705; 0.733 with the floor, LoCoMo unchanged).
# Chosen by cross-validation on LoCoMo and the runbooks set together (bench/ranking_cv.py;
# docs/benchmarks.md, "How the ranking was chosen").
TEXT_COVERAGE_FLOOR = 0.15
# Each hit gains this share of the fused score of every other hit written in the same
# episode at most NEIGHBOUR_SPAN positions away. A turn that answers a question is often
# next to turns that match it better ("Yes, every weekend!" after "Do you still surf?"),
# and an incident's fix sits beside its cause; a small nudge lifts such a fact over an
# equally scored loner. Chosen by the same cross-validation (LoCoMo held out 0.773 to
# 0.781, runbooks 0.733 to 0.740; docs/benchmarks.md). Evidence clusters in episodes:
# spreading the top ten across episodes instead lost up to 0.19 (issue 42).
NEIGHBOUR_WEIGHT = 0.05
NEIGHBOUR_SPAN = 2
# A query that names an entity is searched by meaning with its vector blended, at this
# weight, with the vector of the query whose names are replaced by "they". The entity
# bonus (ENTITY_WEIGHT) already favours the named entity's facts; left in the vector, the
# name also pulls toward every fact that merely says it (on LoCoMo every turn starts with
# its speaker's name), crowding out the facts that say what was asked. Chosen by the
# cross-validation below (docs/benchmarks.md, "Ranking with the graph").
MENTION_MASK_WEIGHT = 0.5
# The order of the pool is a linear model over what fuse knows of each candidate
# (rank_features): the reciprocal-rank score above is one of its inputs, beside the
# cosine, BM25, coverage, ranks, the named entities, the episode neighbours and the place
# in the episode. The union of the two lists held 0.93 of LoCoMo's evidence where the top
# ten held 0.797: most of the loss was order inside the pool. Weights as (every query, added
# when the query names an entity of the memory), fitted by bench/ranking_ltr.py (softmax
# over each question's pool, L2 0.01, every question of the four sets counting the same)
# on all of ranking_cv's recording after its five folds chose the form (bench/ranking_cv.py
# prints them, and the figures; 2026-12-07): held out, LoCoMo
# 0.797 -> 0.816 (+0.019 +/- 0.006, paired), runbooks 0.750 -> 0.788, pyfaq 0.824 -> 0.866,
# mixed 0.945 -> 0.951 (docs/benchmarks.md, "Learned order"). False ranks by the
# reciprocal-rank score alone (the bench's grid over the constants above does).
LEARNED_RANKING = True
RANK_WEIGHTS = {
    "fused": (+1.127, +0.073),   # the reciprocal-rank score, over the pool's best
    "vrrf": (+1.027, -0.659),    # the vector vote, (RRF_K + 1) / (RRF_K + rank)
    "trrf": (+0.415, +0.202),    # the word vote, the same (0 under the coverage floor)
    "cos": (+0.970, -0.156),     # cosine (0 if not in the vector list)
    "cosgap": (-0.839, +0.174),  # the best cosine less this one (0.5 if not in the list)
    "bm25": (+0.594, +0.717),    # BM25 over the word list's best
    "cov": (+1.318, +0.475),     # coverage of the question's words
    "both": (-0.585, -0.338),    # in both lists
    "subj": (+0.846, +0.846),    # its source is an entity the query names
    "obj": (-0.350, -0.350),     # its target is
    "nbf": (+0.560, +0.551),     # the reciprocal-rank scores of its episode neighbours
    "nbn": (-1.000, -0.231),     # how many of them are candidates, over 2 x NEIGHBOUR_SPAN
    "pos": (-1.264, +0.244),     # log(1 + position in its episode) / 3
    "lvr": (-1.366, +0.571),     # log(vector rank) / 4 (1.2 if not in the list)
    "ltr": (-0.161, -0.564),     # log(word rank) / 4 (1.2 if not in the list)
}


@dataclass
class Hit:
    fact_id: uuid.UUID
    rank: int = 0
    fused: float = 0.0
    cosine: float | None = None
    bm25: float | None = None
    matched: list[str] = field(default_factory=list)
    # What the pool is ordered by (LEARNED_RANKING); `fused` is the reciprocal-rank score.
    score: float = 0.0

@dataclass(frozen=True)
class Mentions:
    """The entities a query names: their ids, and the words that named them."""

    ids: frozenset[uuid.UUID] = frozenset()
    names: tuple[str, ...] = ()


_POSSESSIVE = re.compile(r"['\u2019]s\b")
_PUNCTUATION = re.compile(r"[?,.]")


def _query_words(query: str) -> list[str]:
    """The query's words as entity names are stored (normalized), a possessive's "'s"
    dropped: "What is Caroline's job?" names Caroline."""
    return _PUNCTUATION.sub(" ", _POSSESSIVE.sub("", normalize(query))).split()


def mentions_statement(memory_id: int, partition: str, query: str) -> bulk.Statement:
    """The lookup of the entities the query names (any run of up to four words,
    normalized), by index; query_memory sends it with its other reads (bulk.execute_all),
    and mentions_from reads its rows. A query of no words looks up nothing."""
    words = _query_words(query)
    grams = {" ".join(words[i:i + n]) for n in range(1, 5) for i in range(len(words) - n + 1)}
    return bulk.Statement(
        "SELECT id, normalized_name FROM memories_entity WHERE memory_id = %s "
        "AND partition = %s AND normalized_name = ANY(%s)",
        [memory_id, partition, sorted(grams)])


def mentions_from(rows: list[tuple]) -> Mentions:
    """Mentions from mentions_statement's rows: the longest names first, for masking."""
    return Mentions(frozenset(row[0] for row in rows),
                    tuple(sorted({row[1] for row in rows}, key=len, reverse=True)))


def masked_query(query: str, names: tuple[str, ...]) -> str:
    """The query with the entities it names replaced by "they", for the second of the two
    vectors a query is searched with (MENTION_MASK_WEIGHT)."""
    words = _query_words(query)
    masked, i = [], 0
    spans = sorted({len(name.split()) for name in names}, reverse=True)
    while i < len(words):
        for n in spans:
            if " ".join(words[i:i + n]) in names:
                masked.append("they")
                i += n
                break
        else:
            masked.append(words[i])
            i += 1
    return " ".join(masked)


def query_vector(plain: np.ndarray, masked: np.ndarray | None) -> np.ndarray:
    """What the vector list is searched with: the query's vector, blended with the vector
    of the query without its named entities when it names any."""
    if masked is None or not MENTION_MASK_WEIGHT:
        return plain
    blend = (1 - MENTION_MASK_WEIGHT) * plain + MENTION_MASK_WEIGHT * masked
    return (blend / np.linalg.norm(blend)).astype(plain.dtype)


def with_settled(vector: list[Candidate], text: list[Candidate], cosines: dict,
                 limit: int, *, just_embedded=frozenset()) -> list[Candidate]:
    """The vector list again once some candidates have a model vector: those facts ranked
    by its cosine (`cosines`, by id) instead of their first-pass one, a word match that
    now has a vector joining the list, the best `limit` kept. A fact in `just_embedded`
    (embedded by this query) keeps its first-pass score less FIRST_PASS_MARGIN where that
    is higher."""
    known = {c.fact_id: c for c in (*text, *vector)}
    scored = {c.fact_id: c for c in vector}
    for fact_id, cosine in cosines.items():
        if fact_id in known:
            score = float(cosine)
            if fact_id in just_embedded and fact_id in scored:
                score = max(score, scored[fact_id].score - FIRST_PASS_MARGIN)
            scored[fact_id] = known[fact_id]._replace(score=score, coverage=None)
    return sorted(scored.values(), key=lambda c: -c.score)[:limit]


def fuse(
    vector: list[Candidate], text: list[Candidate], top_k: int,
    mentioned: set[uuid.UUID] = frozenset(),
) -> list[Hit]:
    hits: dict[uuid.UUID, Hit] = {}
    subjects: dict[uuid.UUID, bool] = {}
    vector = [c for c in vector if c.score >= VECTOR_FLOOR]
    for position, candidate in enumerate(vector, start=1):
        hit = hits.setdefault(candidate.fact_id, Hit(candidate.fact_id))
        hit.cosine = candidate.score
        hit.fused += VECTOR_WEIGHT / (RRF_K + position)
        hit.matched.append("vector")
        subjects[candidate.fact_id] = candidate.source_id in mentioned
    for position, candidate in enumerate(text, start=1):
        hit = hits.setdefault(candidate.fact_id, Hit(candidate.fact_id))
        hit.bm25 = candidate.score
        # Under the floor the match stays a candidate without a vote, so a fact still
        # waiting for its vector can be found by its words when little else is.
        if candidate.coverage is None or candidate.coverage >= TEXT_COVERAGE_FLOOR:
            hit.fused += TEXT_WEIGHT / (RRF_K + position)
        hit.matched.append("text")
        subjects[candidate.fact_id] = candidate.source_id in mentioned
    if mentioned and ENTITY_WEIGHT:
        # A fact about the entity the question names outranks an equally similar one
        # about someone else.
        for fact_id, is_subject in subjects.items():
            if is_subject:
                hits[fact_id].fused += ENTITY_WEIGHT / (RRF_K + 1)
    if NEIGHBOUR_WEIGHT:
        _add_neighbour_bonus(hits, {c.fact_id: (c.episode_id, c.position)
                                    for c in (*vector, *text) if c.episode_id is not None})
    # On equal fused scores the word match goes first: a first place in the word list is
    # right more often than one in the vector list (LoCoMo recall@1 0.349 against 0.218).
    ranked = sorted(hits.values(),
                    key=lambda h: (-h.fused, h.bm25 is None, -(h.cosine or -1.0)))
    if LEARNED_RANKING:
        features = rank_features(ranked, vector, text, mentioned)
        named = bool(mentioned)
        for hit in ranked:
            hit.score = sum((alone + named * extra) * features[hit.fact_id][name]
                            for name, (alone, extra) in RANK_WEIGHTS.items())
        ranked.sort(key=lambda h: -h.score)  # stable: ties keep the order above
    ranked = ranked[:top_k]
    for rank, hit in enumerate(ranked, start=1):
        hit.rank = rank
    return ranked


def rank_features(hits: list[Hit], vector: list[Candidate], text: list[Candidate],
                  mentioned) -> dict:
    """Per hit of the pool (`hits`, fused; `vector` past the floor), what RANK_WEIGHTS
    weighs, by name."""
    k = RRF_K
    vector_rank = {c.fact_id: p for p, c in enumerate(vector, start=1)}
    text_rank = {c.fact_id: p for p, c in enumerate(text, start=1)}
    candidate: dict = {}
    for c in (*vector, *text):
        candidate.setdefault(c.fact_id, c)
    cosine = {c.fact_id: c.score for c in vector}
    bm25 = {c.fact_id: c.score for c in text}
    coverage = {c.fact_id: 1.0 if c.coverage is None else c.coverage for c in text}
    best_cosine = max(cosine.values(), default=0.0)
    best_bm25 = max(bm25.values(), default=1.0) or 1.0
    fused = {h.fact_id: h.fused for h in hits}
    best_fused = max(fused.values(), default=1.0) or 1.0
    neighbours = episode_neighbours(candidate)
    slots = 2 * NEIGHBOUR_SPAN  # the places a neighbour can hold
    out = {}
    for hit in hits:
        i, c = hit.fact_id, candidate[hit.fact_id]
        near = neighbours[i]
        in_vector, in_text = i in vector_rank, i in text_rank
        voted = in_text and coverage[i] >= TEXT_COVERAGE_FLOOR
        out[i] = {
            "fused": fused[i] / best_fused,
            "vrrf": (k + 1) / (k + vector_rank[i]) if in_vector else 0.0,
            "trrf": (k + 1) / (k + text_rank[i]) if voted else 0.0,
            "cos": cosine.get(i, 0.0),
            "cosgap": best_cosine - cosine[i] if in_vector else 0.5,
            "bm25": bm25.get(i, 0.0) / best_bm25,
            "cov": coverage.get(i, 0.0),
            "both": float(in_vector and in_text),
            "subj": float(c.source_id in mentioned),
            "obj": float(c.target_id in mentioned),
            "nbf": sum(fused[j] for j in near) / best_fused,
            "nbn": len(near) / slots,
            "pos": math.log1p(c.position or 0) / 3,
            "lvr": math.log(vector_rank[i]) / 4 if in_vector else 1.2,
            "ltr": math.log(text_rank[i]) / 4 if in_text else 1.2,
        }
    return out


def episode_neighbours(candidates: dict) -> dict:
    """Per candidate (fact id -> Candidate), the candidates written in its episode at most
    NEIGHBOUR_SPAN positions away."""
    place = {(c.episode_id, c.position): c.fact_id
             for c in candidates.values() if c.episode_id is not None}
    offsets = [d for d in range(-NEIGHBOUR_SPAN, NEIGHBOUR_SPAN + 1) if d]
    return {i: [place[(c.episode_id, c.position + d)] for d in offsets
                if (c.episode_id, c.position + d) in place] if c.episode_id is not None else []
            for i, c in candidates.items()}


def _add_neighbour_bonus(hits: dict[uuid.UUID, Hit], place: dict) -> None:
    """NEIGHBOUR_WEIGHT x the fused score of each hit from the same episode at most
    NEIGHBOUR_SPAN positions away, every bonus taken from the scores before any is added."""
    before = {spot: hits[fact_id].fused for fact_id, spot in place.items()}
    offsets = [d for d in range(-NEIGHBOUR_SPAN, NEIGHBOUR_SPAN + 1) if d]
    for fact_id, (episode_id, position) in place.items():
        near = sum(before.get((episode_id, position + d), 0.0) for d in offsets)
        hits[fact_id].fused += NEIGHBOUR_WEIGHT * near
