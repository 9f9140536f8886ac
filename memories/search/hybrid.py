"""Hybrid recall: BM25 over Postgres full text and pgvector cosine, fused by rank.

Full text: candidates come from the GIN index, restricted to the query's more
selective words so a common word cannot drag in half the memory (when every word
is common, to facts that have the two rarest together); each candidate
is scored with BM25 (term frequency taken as 1, which holds for sentence-length
facts) using per-partition document frequencies kept by the indexer.
Vectors: the HNSW index with iterative scans, so filtering by memory and
partition still yields enough neighbours.
Fusion: weighted reciprocal rank fusion, plus a bonus for facts about an entity the
query names and a smaller one for facts written beside other candidates; a word match
votes only when it covers enough of the question.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import numpy as np
from django.db import connection, transaction
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from memories.graph.names import normalize
from memories.models import TEXT_SEARCH_CONFIG, Fact
from memories.search import first_pass, vector_params

BM25_K1 = 1.2
BM25_B = 0.75
# Stop adding words to the candidate filter once they would match this many facts.
TEXT_CANDIDATE_BUDGET = 800
TEXT_CANDIDATE_CAP = 1500
# When every word is common, candidates must have this many of the rarest together.
AND_TERMS = 4
# Reciprocal rank fusion constant. The usual 60 flattens the top of two 50-long lists so
# much that agreement on mediocre hits beats a clear first place; 10 won on LoCoMo dev
# (docs/benchmarks.md has the sweep).
RRF_K = 10
VECTOR_WEIGHT = 1.0
TEXT_WEIGHT = 1.0
# 128 rather than pgvector's 40 or our earlier 64: at 1M facts recall@10 against exact
# search rose from 0.550 to 0.645 on the scale bench's near-duplicate clusters for 0.2 ms
# at p95 (docs/benchmarks.md, Scale).
HNSW_EF_SEARCH = 128
# A partition of at most this many indexed facts is searched exactly (every live vector
# read through the partition's index): the HNSW graph, one for every memory, can miss a
# lone fact among near-duplicates, and for a small memory inside a big index it spends its
# scan on other memories' facts. Exact read 4,000 vectors in under 3 ms here. The caller
# decides by indexing.partition_counts, which each query reads anyway.
EXACT_SEARCH_MAX = 4000
# How many of a partition's facts still waiting for the indexer are searched by their
# first-pass vector (memories/search/first_pass.py), newest first.
FIRST_PASS_SCAN = 5000
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
# weight (Candidate.coverage). Below it the match is one or two incidental words: when a
# question is paraphrased, such matches fill the word list and, with a vote each, push the
# vector list's right answer out of the top (on the runbooks set the hybrid fell to
# recall@10 0.615, under vectors alone at 0.705; 0.733 with the floor, LoCoMo unchanged).
# Chosen by cross-validation on LoCoMo and the runbooks set together (bench/ranking_cv.py;
# docs/benchmarks.md, "How the ranking was chosen").
TEXT_COVERAGE_FLOOR = 0.15
# Each hit gains this share of the fused score of every other hit written in the same
# episode at most NEIGHBOUR_SPAN positions away. A turn that answers a question is often
# next to turns that match it better ("Yes, every weekend!" after "Do you still surf?"),
# and an incident's fix sits beside its cause; a small nudge lifts such a fact over an
# equally scored loner. Chosen by the same cross-validation (LoCoMo held out 0.773 to
# 0.781, runbooks 0.733 to 0.740; docs/benchmarks.md).
NEIGHBOUR_WEIGHT = 0.05
NEIGHBOUR_SPAN = 2


@dataclass(frozen=True)
class Window:
    """Which versions of facts a read sees, on two clocks (docs/engine.md, "Record time and
    event time").

    Record time (`as_of`): the versions the memory held then. Event time (`valid_as_of`):
    of the versions held (now, or at `as_of`), those true in the world at that time. A
    version is true from `valid_at` (else from when it was recorded) until `invalid_at` and,
    once replaced, until its replacement starts: `valid_at` of the replacement, else the
    moment of replacement (the replacement's `created_at` is that moment). So a key's
    history reads as consecutive periods, as Graphiti closes an edge a new one contradicts.
    """

    include_superseded: bool = False
    as_of: datetime | None = None
    valid_as_of: datetime | None = None

    def q(self) -> Q:
        """The same condition as `sql`, for ORM querysets over Fact."""
        where, params = self.sql(Fact._meta.db_table)
        return Q() if where == "TRUE" else Q(RawSQL(where, params, output_field=BooleanField()))

    def sql(self, alias: str = "f") -> tuple[str, list[object]]:
        if self.valid_as_of is not None:
            return self._valid_then(alias)
        if self.as_of is not None:
            return (f"{alias}.created_at <= %s AND ({alias}.superseded_at IS NULL "
                    f"OR {alias}.superseded_at > %s)", [self.as_of, self.as_of])
        if self.include_superseded:
            return "TRUE", []
        return f"{alias}.superseded_at IS NULL", []

    def _valid_then(self, alias: str) -> tuple[str, list[object]]:
        when, recorded = self.valid_as_of, self.as_of
        # The replacement's start is a primary-key probe, last so that it runs only for the
        # replaced versions the row's own columns have not already ruled out.
        clauses = [f"coalesce({alias}.valid_at, {alias}.created_at) <= %s",
                   f"({alias}.invalid_at IS NULL OR {alias}.invalid_at > %s)"]
        params: list[object] = [when, when]
        live_then = f"{alias}.superseded_at IS NULL"
        if recorded is not None:
            clauses.insert(0, f"{alias}.created_at <= %s")
            params.insert(0, recorded)
            live_then += f" OR {alias}.superseded_at > %s"
            params.append(recorded)
        replacement_start = (
            f"coalesce((SELECT n.valid_at FROM {Fact._meta.db_table} n "
            f"WHERE n.id = {alias}.superseded_by_id), {alias}.superseded_at)")
        clauses.append(f"({live_then} OR {replacement_start} > %s)")
        params.append(when)
        return " AND ".join(clauses), params


# The columns after id and score that every candidate query returns, by name (Corpus.ends
# gives them these names); `_candidate` reads them back by the same names.
ENDS_COLUMNS = ("source_id", "target_id", "episode_id", "position")
ENDS = ", ".join(ENDS_COLUMNS)


@dataclass(frozen=True)
class Corpus:
    """What a search reads: a table with memory_id, partition, embedding, search_vector and
    created_at, the endpoint columns it hands to fusion, and where its word statistics are.

    Facts keep BM25 statistics incrementally (TermStat, CorpusStat: the indexer adds each
    fact once, and a fact's text never changes). Notes are rewritten in place by a save, so
    incremental counts would drift; their statistics are counted when searched, which a
    partition's notes (hundreds, not millions) make cheap.
    """

    table: str
    ends: str
    stats: str


# The indexer counts a fact's words when it stores its vector. Until then the newest
# waiting facts (as many as the vector search reads by first-pass vector) are counted when
# searched, so a question asked right after a write weighs its words as it will later:
# without them a conversation just written had no statistics at all, and words alone found
# 0.525 of LoCoMo's evidence in the top 10 instead of 0.637.
FACTS = Corpus(
    table="memories_fact", ends="f.source_id, f.target_id, f.episode_id, f.position",
    stats=("WITH waiting AS MATERIALIZED (SELECT f.search_vector FROM memories_fact f "
           "WHERE f.memory_id = %(memory)s AND f.partition = %(partition)s "
           "AND f.embedding IS NULL ORDER BY f.created_at DESC, f.position DESC "
           "LIMIT %(waiting)s), "
           "w AS (SELECT count(*) AS documents, coalesce(sum(length(search_vector)), 0) "
           "AS tokens FROM waiting) "
           "SELECT q.lexeme, coalesce(t.df, 0) + CASE WHEN w.documents = 0 THEN 0 ELSE "
           "(SELECT count(*) FROM waiting WHERE search_vector @@ "
           "quote_literal(q.lexeme)::tsquery) END, "
           "coalesce(c.documents, 0) + w.documents, coalesce(c.tokens, 0) + w.tokens FROM "
           f"unnest(tsvector_to_array(to_tsvector('{TEXT_SEARCH_CONFIG}', %(query)s))) "
           "AS q(lexeme) CROSS JOIN w "
           "LEFT JOIN LATERAL (SELECT df FROM memories_termstat WHERE memory_id = %(memory)s "
           "AND partition = %(partition)s AND term = q.lexeme LIMIT 1) t ON true "
           "LEFT JOIN memories_corpusstat c ON c.memory_id = %(memory)s "
           "AND c.partition = %(partition)s"),
)
NOTES = Corpus(
    table="memories_note", ends=("NULL::uuid AS source_id, NULL::uuid AS target_id, "
                                 "NULL::uuid AS episode_id, NULL::int AS position"),
    stats=("SELECT q.lexeme, (SELECT count(*) FROM memories_note n WHERE n.memory_id = "
           "%(memory)s AND n.partition = %(partition)s AND n.search_vector @@ "
           "quote_literal(q.lexeme)::tsquery), c.documents, c.tokens FROM "
           f"unnest(tsvector_to_array(to_tsvector('{TEXT_SEARCH_CONFIG}', %(query)s))) "
           "AS q(lexeme), (SELECT count(*) AS documents, sum(length(search_vector)) AS tokens "
           "FROM memories_note WHERE memory_id = %(memory)s AND partition = %(partition)s) c"),
)


@dataclass(frozen=True)
class NoteFilter:
    """Which notes a search sees: all of the partition's, or one project's. (Notes keep
    their history in NoteVersion, so every row is current.)"""

    project: str | None = None

    def sql(self, alias: str = "f") -> tuple[str, list[object]]:
        if self.project is None:
            return "TRUE", []
        return f"{alias}.project = %s", [self.project]


class Candidate(NamedTuple):
    fact_id: uuid.UUID
    score: float
    source_id: uuid.UUID
    target_id: uuid.UUID
    # Word matches only: the BM25 score over what a document of average length holding
    # every query word would score, i.e. about the share of the query's weight matched.
    coverage: float | None = None
    # Where the fact was written (facts only; notes have no episode).
    episode_id: uuid.UUID | None = None
    position: int | None = None


def _candidate(row: tuple, coverage: float | None = None) -> Candidate:
    """A candidate from a row of (id, score, *ENDS_COLUMNS)."""
    return Candidate(row[0], float(row[1]), coverage=coverage,
                     **dict(zip(ENDS_COLUMNS, row[2:], strict=True)))


@dataclass
class Hit:
    fact_id: uuid.UUID
    rank: int = 0
    fused: float = 0.0
    cosine: float | None = None
    bm25: float | None = None
    matched: list[str] = field(default_factory=list)


def vector_candidates(
    memory_id: int, partition: str, query_vector: np.ndarray, limit: int, window: Window,
    corpus: Corpus = FACTS, *, exact: bool = False,
) -> list[Candidate]:
    """The nearest facts (or notes) by cosine. `exact` (a partition of at most
    EXACT_SEARCH_MAX indexed facts, read live) reads every vector instead of the HNSW
    index; reads of the past always take the index."""
    where, params = window.sql()
    query = vector_params.halfvec(query_vector)
    # savepoint=False: inside query_memory's transaction this adds no round trips.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        # One round trip; the word search's planner setting must not price this plan.
        cursor.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, int(limit))}; "
                       "SET LOCAL hnsw.iterative_scan = relaxed_order; "
                       "SET LOCAL cpu_operator_cost TO DEFAULT")
        near = ("SELECT f.id, f.embedding <=> %s::halfvec AS distance, "
                f"{corpus.ends} "
                f"FROM {corpus.table} f WHERE f.memory_id = %s AND f.partition = %s "
                f"AND f.embedding IS NOT NULL AND {where} ORDER BY distance LIMIT %s")
        near_params = [query, memory_id, partition, *params, limit]
        if exact and corpus is FACTS and window == Window():
            # The inner LIMIT keeps the sort off the HNSW index, and bounds the work should
            # the partition's count ever fall behind it.
            near = ("SELECT * FROM (SELECT f.id, f.embedding <=> %s::halfvec AS distance, "
                    f"{corpus.ends} FROM memories_fact f WHERE f.memory_id = %s "
                    f"AND f.partition = %s AND f.embedding IS NOT NULL AND {where} LIMIT %s) e "
                    "ORDER BY e.distance LIMIT %s")
            near_params = [query, memory_id, partition, *params, 2 * EXACT_SEARCH_MAX, limit]
        if corpus is not FACTS:
            cursor.execute(f"WITH near AS MATERIALIZED ({near}) "
                           f"SELECT id, 1 - distance, {ENDS} FROM near "
                           "ORDER BY distance", near_params)
        else:
            # Facts still waiting for the indexer compete with their first-pass vectors,
            # on the settled scale; the newest FIRST_PASS_SCAN of them, by the queue's
            # index, so a bulk import's backlog costs a bounded scan.
            # A waiting fact a query has embedded with the model (first_pass_from_model)
            # is on that scale already.
            cursor.execute(
                f"WITH near AS MATERIALIZED ({near}), "
                "waiting AS MATERIALIZED (SELECT id, CASE WHEN first_pass_from_model "
                "THEN 1 - distance ELSE %s::float8 * (1 - distance) + %s::float8 END AS score, "
                f"{ENDS} FROM (SELECT f.id, f.first_pass_embedding <=> %s::halfvec "
                f"AS distance, f.first_pass_from_model, {corpus.ends} "
                "FROM memories_fact f WHERE f.memory_id = %s AND f.partition = %s "
                f"AND f.embedding IS NULL AND {where} "
                "ORDER BY f.created_at DESC, f.position DESC LIMIT %s) w "
                "WHERE distance IS NOT NULL ORDER BY score DESC LIMIT %s) "
                f"SELECT id, 1 - distance, {ENDS} FROM near UNION ALL "
                f"SELECT id, score, {ENDS} FROM waiting ORDER BY 2 DESC LIMIT %s",
                [*near_params, first_pass.CALIBRATION_SCALE, first_pass.CALIBRATION_OFFSET,
                 query, memory_id, partition, *params, FIRST_PASS_SCAN, limit, limit])
        return [_candidate(row) for row in cursor.fetchall()]


def text_candidates(
    memory_id: int, partition: str, query: str, limit: int, window: Window,
    corpus: Corpus = FACTS,
) -> list[Candidate]:
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        # One unique-index probe per word (LATERAL ... LIMIT 1), whatever the statistics
        # say: a fresh box that has not been analyzed yet hash-joined the whole table.
        cursor.execute(corpus.stats, {"query": query, "memory": memory_id,
                                      "partition": partition, "waiting": FIRST_PASS_SCAN})
        rows = cursor.fetchall()
        if not rows:
            return []
        terms = sorted(((term, df) for term, df, _, _ in rows), key=lambda row: (row[1], row[0]))
        documents, tokens = rows[0][2] or 0, rows[0][3] or 0
        weights = {term: _idf(df, documents) for term, df in terms}
        average_length = tokens / documents if documents else 8.0
        where, params = window.sql()
        score_terms = " + ".join(
            "(CASE WHEN f.search_vector @@ %s::tsquery THEN %s::float8 ELSE 0 END)"
            for _ in weights
        )
        score_params: list[object] = []
        for term, weight in weights.items():
            score_params += [_tsquery_literal([term]), weight]
        # The selective words make the GIN index the right plan, but the planner prices
        # tsquery matching too low and may scan the whole memory instead; the hard cap
        # bounds the work when even the rarest word is common.
        cursor.execute("SET LOCAL cpu_operator_cost = 0.05")
        statement = (
            "WITH candidates AS MATERIALIZED (SELECT f.id, f.search_vector, f.created_at, "
            f"{corpus.ends} "
            f"FROM {corpus.table} f WHERE f.memory_id = %s AND f.partition = %s "
            f"AND f.search_vector @@ %s::tsquery AND {where} LIMIT %s) "
            # float8 throughout: psycopg sends Python floats as numeric, whose arithmetic
            # cost more than the matching itself.
            f"SELECT f.id, ({score_terms}) * %s::float8 / (1 + %s::float8 * (1 - %s::float8 "
            "+ %s::float8 * length(f.search_vector) / %s::float8)) AS score, "
            f"{ENDS} FROM candidates f ORDER BY score DESC, f.created_at DESC LIMIT %s")
        rows = []
        for candidate_filter in _candidate_filters(terms):
            cursor.execute(statement, [
                memory_id, partition, candidate_filter, *params, TEXT_CANDIDATE_CAP,
                *score_params, BM25_K1 + 1, BM25_K1, BM25_B, BM25_B, average_length, limit])
            rows = cursor.fetchall()
            if rows:
                break
        # With term frequency 1 and average length the BM25 factor is 1, so this is the
        # score of a document that holds every word of the query.
        whole = sum(weights.values()) or 1.0
        return [_candidate(row, coverage=float(row[1]) / whole) for row in rows]


def _candidate_filters(terms: list[tuple[str, int]]) -> list[str]:
    """tsqueries that pick the facts worth scoring, to try in order until one matches.

    The rarest words, OR'ed, while their matches fit the budget. When even the rarest
    word is over it, facts that have all of the (up to four) rarest words come first,
    then those with the two rarest: fewer facts to score, and the ones that share most
    with the question. The rarest word alone is the last resort.
    """
    rarest = _tsquery_literal(_selective_terms(terms))
    if len(terms) < 2 or terms[0][1] <= TEXT_CANDIDATE_BUDGET:
        return [rarest]
    words = [_tsquery_literal([term]) for term, _ in terms[:AND_TERMS]]
    filters = [" & ".join(words)]
    if len(words) > 2:
        filters.append(" & ".join(words[:2]))
    return [*filters, rarest]


def _idf(df: int, documents: int) -> float:
    if documents <= 0:
        return 1.0
    return math.log(1 + (documents - df + 0.5) / (df + 0.5))


def _selective_terms(terms: list[tuple[str, int]]) -> list[str]:
    """The rarest words whose matches fit the budget (always at least the rarest one)."""
    chosen, matched = [], 0
    for term, df in terms:
        if chosen and matched + df > TEXT_CANDIDATE_BUDGET:
            break
        chosen.append(term)
        matched += df
    return chosen


def _tsquery_literal(terms: list[str]) -> str:
    """Lexemes quoted for a tsquery, OR'ed; they come from to_tsvector, so already normalized."""
    return " | ".join("'" + term.replace("\\", "\\\\").replace("'", "''") + "'"
                      for term in terms)


def mentioned_entities(memory_id: int, partition: str, query: str) -> set[uuid.UUID]:
    """Entities the query names (any run of up to four words, normalized), by index lookup."""
    words = normalize(query).replace("?", " ").replace(",", " ").replace(".", " ").split()
    grams = {" ".join(words[i:i + n]) for n in range(1, 5) for i in range(len(words) - n + 1)}
    if not grams:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM memories_entity WHERE memory_id = %s AND partition = %s "
            "AND normalized_name = ANY(%s)", [memory_id, partition, sorted(grams)],
        )
        return {row[0] for row in cursor.fetchall()}


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
                    key=lambda h: (-h.fused, h.bm25 is None, -(h.cosine or -1.0)))[:top_k]
    for rank, hit in enumerate(ranked, start=1):
        hit.rank = rank
    return ranked


def _add_neighbour_bonus(hits: dict[uuid.UUID, Hit], place: dict) -> None:
    """NEIGHBOUR_WEIGHT x the fused score of each hit from the same episode at most
    NEIGHBOUR_SPAN positions away, every bonus taken from the scores before any is added."""
    before = {spot: hits[fact_id].fused for fact_id, spot in place.items()}
    offsets = [d for d in range(-NEIGHBOUR_SPAN, NEIGHBOUR_SPAN + 1) if d]
    for fact_id, (episode_id, position) in place.items():
        near = sum(before.get((episode_id, position + d), 0.0) for d in offsets)
        hits[fact_id].fused += NEIGHBOUR_WEIGHT * near
