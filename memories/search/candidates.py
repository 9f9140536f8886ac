"""The two candidate lists hybrid recall fuses (hybrid.py): BM25 over Postgres full text,
restricted to the query's more selective words, and pgvector cosine, by HNSW or exactly,
with waiting facts by their first-pass vector."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from django.db import connection

from echomem import bulk
from memories.models import TEXT_SEARCH_CONFIG
from memories.search import first_pass, vector_params
from memories.search.window import Window

BM25_K1 = 1.2
BM25_B = 0.75
# A query word a fact lacks but its context holds (the facts written just before it in its
# episode, Fact.context_vector) counts this share of the word's weight. A reply holds few of
# the words its question was asked with ("Yes, every weekend!" after "Do you still surf?").
# Only facts their own words found are scored so: a context that alone held the words put
# the fact after the one that says them on a par with it in a small memory of unrelated
# facts (tests/engine/test_query_memory.py, "billing tables"). Held-out recall@10, the
# weight chosen per fold among 0, 0.125, 0.25 and 0.5 (all five folds chose 0.25): LoCoMo
# 0.791 to 0.797, runbooks, pyfaq and the mixed set unchanged (0.750, 0.824, 0.945); 0.5
# gave LoCoMo 0.788 and pyfaq 0.793, the FAQ's later parts outranking the first that
# answers (docs/benchmarks.md, "Ranking with the graph").
CONTEXT_WORD_WEIGHT = 0.25
# Stop adding words to the candidate filter once they would match this many facts.
TEXT_CANDIDATE_BUDGET = 800
TEXT_CANDIDATE_CAP = 1500
# When every word is common, candidates must have this many of the rarest together.
AND_TERMS = 4
# 128 rather than pgvector's 40 or our earlier 64: at 1M facts recall@10 against exact
# search rose from 0.550 to 0.645 on the scale bench's near-duplicate clusters for 0.2 ms
# at p95 (docs/benchmarks.md, Scale). On real sentences at 100k (Scale on real sentences)
# it gives 0.97 in a memory of 56k and one of 20k, 1.00 in one of 10k; 256 would add
# about 0.013 for 2-5 ms more at p50 under load.
HNSW_EF_SEARCH = 128
# Past a million facts in the table, a memory filtered out of it loses recall at a fixed
# ef_search (a fifth of the table: 0.963 at 1M, 0.934 at 2M, 0.937 at 3M at 128; at 3M
# 256 gave 0.949 and 400 0.958; docs/benchmarks.md, "Past 1M: the curve"), so query_memory
# grows it in proportion to the table past HNSW_EF_SEARCH_FACTS (256 at 2M, 384 at 3M),
# up to pgvector's maximum. The table's size is the planner's estimate, read with the
# partition's counts at no extra round trip.
HNSW_EF_SEARCH_FACTS = 1_000_000
HNSW_EF_SEARCH_MAX = 1000
# pgvector's iterative index scan: when the graph's nearest are mostly other memories'
# facts, the scan goes on past ef_search (up to hnsw.max_scan_tuples) instead of returning
# too few.
HNSW_ITERATIVE_SCAN = "relaxed_order"
# A partition of at most this many indexed facts is searched exactly (every live vector
# read through the partition's index): the HNSW graph, one for every memory, can miss a
# lone fact among near-duplicates, and for a small memory inside a big index it spends its
# scan on other memories' facts. Exact read 4,000 vectors in under 3 ms here. Not more: a
# memory of 10,000 real sentences among 100k took 24.5 ms p50 exactly against 5.4 ms by
# the graph, whose recall@10 there was 0.999 (docs/benchmarks.md, Scale on real
# sentences). The caller decides by partition_counts, which each query reads.
EXACT_SEARCH_MAX = 4000
# How many of a partition's facts still waiting for the indexer are searched by their
# first-pass vector (memories/search/first_pass.py), newest first.
FIRST_PASS_SCAN = 5000


# The columns after id and score that every candidate query returns, by name (Corpus.ends
# gives them these names); `_candidate` reads them back by the same names.
ENDS_COLUMNS = ("source_id", "target_id", "episode_id", "position")
ENDS = ", ".join(ENDS_COLUMNS)


@dataclass(frozen=True)
class Corpus:
    """What a search reads: a table with memory_id, partition, embedding, search_vector and
    created_at, the endpoint columns it hands to fusion, where its word statistics are, and
    the column of each row's context words if it has one (facts: Fact.context_vector).

    Facts keep BM25 statistics incrementally (TermStat, CorpusStat: the indexer adds each
    fact once, and a fact's text never changes). Notes are rewritten in place by a save, so
    incremental counts would drift; their statistics are counted when searched, which a
    partition's notes (hundreds, not millions) make cheap.
    """

    table: str
    ends: str
    stats: str
    context: str | None = None


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
    context="context_vector",
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


def ef_search(limit: int, table_facts: int = 0) -> int:
    """hnsw.ef_search for `limit` candidates in a fact table of `table_facts` rows
    (HNSW_EF_SEARCH_FACTS)."""
    grown = HNSW_EF_SEARCH * max(1.0, table_facts / HNSW_EF_SEARCH_FACTS)
    return min(HNSW_EF_SEARCH_MAX, max(int(limit), round(grown)))


def vector_candidates(
    memory_id: int, partition: str, query_vector: np.ndarray, limit: int, window: Window,
    corpus: Corpus = FACTS, *, exact: bool = False, table_facts: int = 0,
) -> list[Candidate]:
    """The nearest facts (or notes) by cosine. `exact` (a partition of at most
    EXACT_SEARCH_MAX indexed facts, read live) reads every vector instead of the HNSW
    index; reads of the past always take the index. `table_facts`: the fact table's size,
    which ef_search grows with."""
    where, params = window.sql()
    query = vector_params.halfvec(query_vector)
    # The word search's planner setting must not price this plan.
    settings = (f"SET LOCAL hnsw.ef_search = {ef_search(limit, table_facts)}; "
                f"SET LOCAL hnsw.iterative_scan = {HNSW_ITERATIVE_SCAN}; "
                "SET LOCAL cpu_operator_cost TO DEFAULT")
    # No transaction of its own: the settings and the search go as one simple query,
    # which Postgres runs as one implicit transaction, so SET LOCAL ends with it.
    with connection.cursor() as cursor:
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
            _execute_after(cursor, settings, f"WITH near AS MATERIALIZED ({near}) "
                           f"SELECT id, 1 - distance, {ENDS} FROM near "
                           "ORDER BY distance", near_params)
        else:
            # Facts still waiting for the indexer compete with their first-pass vectors,
            # on the settled scale; the newest FIRST_PASS_SCAN of them, by the queue's
            # index, so a bulk import's backlog costs a bounded scan.
            # A waiting fact a query has embedded with the model (first_pass_from_model)
            # is on that scale already.
            _execute_after(
                cursor, settings,
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


def word_statistics(memory_id: int, partition: str, query: str,
                    corpus: Corpus = FACTS) -> bulk.Statement:
    """The statement whose rows text_candidates weighs the query's words by (each word's
    document frequency, the partition's documents and tokens): for a caller that sends it
    with others (bulk.execute_all) and hands its rows to text_candidates."""
    # One unique-index probe per word (LATERAL ... LIMIT 1), whatever the statistics say:
    # a fresh box that has not been analyzed yet hash-joined the whole table.
    return bulk.Statement(corpus.stats, {"query": query, "memory": memory_id,
                                         "partition": partition, "waiting": FIRST_PASS_SCAN})


def text_candidates(
    memory_id: int, partition: str, query: str, limit: int, window: Window,
    corpus: Corpus = FACTS, *, small: bool = False, statistics: list[tuple] | None = None,
) -> list[Candidate]:
    """The best word matches by BM25. `small` (a partition of at most EXACT_SEARCH_MAX
    facts, as the caller counts them for the exact vector search): the partition's rows
    are read and matched one by one instead of through the word index, whose posting lists
    grow with the whole table: at 1M facts, a 680-fact memory's search spent 9 of its 10 ms
    reading 24,720 matches of its common words in other memories (docs/benchmarks.md).
    `statistics`: word_statistics' rows, when the caller has read them already."""
    # No transaction of its own (see vector_candidates): under READ COMMITTED each
    # statement reads its own snapshot anyway, and a BEGIN and a COMMIT are two round trips.
    with connection.cursor() as cursor:
        rows = (bulk.execute(*word_statistics(memory_id, partition, query, corpus))
                if statistics is None else statistics)
        if not rows:
            return []
        terms = sorted(((term, df) for term, df, _, _ in rows), key=lambda row: (row[1], row[0]))
        documents, tokens = rows[0][2] or 0, rows[0][3] or 0
        weights = {term: _idf(df, documents) for term, df in terms}
        average_length = tokens / documents if documents else 8.0
        where, params = window.sql()
        # A word of the fact's own counts whole; one only its context holds, a share. The
        # candidates are found by their own words alone (see CONTEXT_WORD_WEIGHT).
        context = corpus.context
        score_terms = " + ".join(
            "(CASE WHEN f.search_vector @@ %s::tsquery THEN %s::float8 "
            + (f"WHEN f.{context} @@ %s::tsquery THEN %s::float8 " if context else "")
            + "ELSE 0 END)"
            for _ in weights
        )
        score_params: list[object] = []
        for term, weight in weights.items():
            literal = _tsquery_literal([term])
            score_params += [literal, weight]
            if context:
                score_params += [literal, weight * CONTEXT_WORD_WEIGHT]
        # The selective words make the GIN index the right plan, but the planner prices
        # tsquery matching too low and may scan the whole memory instead; the hard cap
        # bounds the work when even the rarest word is common.
        settings = "SET LOCAL cpu_operator_cost = 0.05"
        columns = (f"f.id, f.search_vector, {f'f.{context}, ' if context else ''}"
                   f"f.created_at, {corpus.ends}")
        if small:
            # The partition's rows first (MATERIALIZED: the planner cannot fold the match
            # back into an index condition), then the match on each.
            found = (f"mine AS MATERIALIZED (SELECT {columns} FROM {corpus.table} f "
                     f"WHERE f.memory_id = %s AND f.partition = %s AND {where}), "
                     "candidates AS MATERIALIZED (SELECT * FROM mine f "
                     "WHERE f.search_vector @@ %s::tsquery LIMIT %s) ")
        else:
            found = (f"candidates AS MATERIALIZED (SELECT {columns} FROM {corpus.table} f "
                     "WHERE f.memory_id = %s AND f.partition = %s "
                     f"AND f.search_vector @@ %s::tsquery AND {where} LIMIT %s) ")
        statement = (
            f"WITH {found}"
            # float8 throughout: psycopg sends Python floats as numeric, whose arithmetic
            # cost more than the matching itself.
            f"SELECT f.id, ({score_terms}) * %s::float8 / (1 + %s::float8 * (1 - %s::float8 "
            "+ %s::float8 * length(f.search_vector) / %s::float8)) AS score, "
            # Equal scores (the same words in facts of one write) go in the order they were
            # written, not the heap's: a copy of the memory (export and import) ranks alike.
            f"{ENDS} FROM candidates f ORDER BY score DESC, f.created_at DESC, f.position "
            "LIMIT %s")
        rows = []
        for candidate_filter in _candidate_filters(terms):
            chosen = ([*params, candidate_filter] if small else [candidate_filter, *params])
            _execute_after(cursor, settings, statement, [
                memory_id, partition, *chosen, TEXT_CANDIDATE_CAP,
                *score_params, BM25_K1 + 1, BM25_K1, BM25_B, BM25_B, average_length, limit])
            rows = cursor.fetchall()
            if rows:
                break
        # With term frequency 1 and average length the BM25 factor is 1, so this is the
        # score of a document that holds every word of the query.
        whole = sum(weights.values()) or 1.0
        return [_candidate(row, coverage=float(row[1]) / whole) for row in rows]


def _execute_after(cursor, settings: str, statement: str, params: list) -> None:
    """`settings` (SET LOCAL statements, or "") and then `statement`, in one round trip:
    Django's cursor binds parameters on the client, so the two go to the server as one
    simple query, each planned after the one before has run. The cursor is left on the
    statement's rows."""
    cursor.execute(f"{settings}; {statement}" if settings else statement, params)
    while cursor.description is None and cursor.nextset():
        pass


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
