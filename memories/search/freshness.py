"""Read-your-writes: a query's waiting candidates ranked by the model's vectors, and a
partition's newest waiting notes embedded before memory_search searches, without waiting
for the indexer (indexing.py's docstring; docs/engine.md, "Read-your-writes")."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from django.db import OperationalError, connection, transaction

from echomem.db import LOCK_NOT_AVAILABLE
from memories.search import vector_params
from memories.search.embeddings import get_embedder
from memories.search.storing import NOTE_COLUMNS, _embed_and_store_notes, _texts_with_context

# What embedding one waiting fact has cost this process lately (a running mean; the first
# guess is two cores' cost with context), to size query_memory's settling to its budget.
_seconds_per_fact = 0.02


# The best of a query's candidates that still wait for their vector and have none from the
# model yet, in the query's order. Read, not locked: an indexer is never waited for.
BEST_WAITING = (
    "SELECT id, search_text, episode_id, position FROM memories_fact "
    "WHERE id = ANY(%s::uuid[]) AND embedding IS NULL AND NOT first_pass_from_model "
    "ORDER BY array_position(%s::uuid[], id) LIMIT %s"
)
# Cosines from the model's vectors: the settled one, else one a query stored while it waits.
MODEL_COSINES = (
    "SELECT id, 1 - (coalesce(embedding, first_pass_embedding) <=> %s::halfvec) "
    "FROM memories_fact WHERE id = ANY(%s::uuid[]) "
    "AND (embedding IS NOT NULL OR first_pass_from_model)"
)
# Rows an indexer holds are skipped: it is storing their settled vector.
STORE_PROVISIONAL = (
    "UPDATE memories_fact f SET first_pass_embedding = v.embedding, "
    "first_pass_from_model = true FROM unnest(%s::uuid[], %s::halfvec[]) AS v(id, embedding) "
    "WHERE f.id = v.id AND f.id IN (SELECT id FROM memories_fact WHERE id = ANY(%s::uuid[]) "
    "AND embedding IS NULL FOR UPDATE SKIP LOCKED)"
)


class Rescored(NamedTuple):
    embedded: list  # ids of the waiting facts this call embedded (int8, kept while they wait)
    cosines: dict  # fact id -> cosine to the query, for every ranked fact that has one


def rescore_waiting(ranked: Sequence, query_vector, *, facts: int, seconds: float) -> Rescored:
    """Cosines to the query from the model's vectors for a query's candidates: the settled
    vector where a fact has it, else one a query embedded while the fact waits, and for the
    best of those with neither, a vector embedded now.

    `ranked`: the query's candidate fact ids, best first (its first ranking, waiting facts on
    their first-pass vectors). The first `facts` of them still waiting, fewer if the time
    `seconds` would not cover them by what a fact has cost lately, are embedded with the
    indexer's context by the int8 copy of the model (OnnxMiniLMEmbedder.embed_quick, 1.4x
    to 2.2x faster; cosine 0.993 to the settled vector) and kept in place of their
    first-pass vector (first_pass_from_model), so later queries rank them alike for nothing.
    The settled vectors stay the indexer's: it embeds these facts as any other, and a query
    never waits for it (rows it holds are skipped).

    Why the query's own candidates and not the newest facts: on LoCoMo asked right after each
    conversation is written, embedding the three to eight best waiting candidates of each
    question keeps hybrid recall@10 at the settled figure, where the newest 64 facts cost
    eight to sixteen times the embedding for less (docs/benchmarks.md, "Freshness").
    """
    global _seconds_per_fact
    ids = list(ranked)
    if not ids:
        return Rescored([], {})
    size = min(facts, max(1, int(seconds / _seconds_per_fact))) if facts > 0 else 0
    rows, texts = [], []
    with connection.cursor() as cursor:
        if size:
            cursor.execute(BEST_WAITING, [ids, ids, size])
            rows = cursor.fetchall()
            texts = _texts_with_context(cursor, rows) if rows else []
        # Read second: a fact the indexer stores meanwhile is then ranked by its settled vector.
        cursor.execute(MODEL_COSINES, [vector_params.halfvec(query_vector), ids])
        cosines = {fact_id: float(cosine) for fact_id, cosine in cursor.fetchall()}
    embedded = [row[0] for row in rows]
    if rows:
        started = time.monotonic()
        vectors = get_embedder().embed_quick(texts)
        cost = (time.monotonic() - started) / len(rows)
        _seconds_per_fact = 0.5 * _seconds_per_fact + 0.5 * cost
        query = np.asarray(query_vector, dtype=np.float32)
        for row, vector in zip(rows, vectors, strict=True):
            cosines.setdefault(row[0], float(vector @ query))
        with connection.cursor() as cursor:
            cursor.execute(STORE_PROVISIONAL, [
                embedded, [vector_params.halfvec(vector) for vector in vectors], embedded])
    return Rescored(embedded, cosines)


def _claim_within(cursor, seconds: float, sql: str, params: list) -> list[tuple]:
    """Rows of a FOR UPDATE claim whose lock waits last at most `seconds` in all."""
    cursor.execute(f"SET LOCAL lock_timeout = {max(1, int(seconds * 1000))}")
    cursor.execute(sql, params)
    rows = cursor.fetchall()
    cursor.execute("SET LOCAL lock_timeout TO DEFAULT")
    return rows


def _lock_budget_spent(exc: OperationalError) -> bool:
    return getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE


# The newest notes of one partition still waiting for their vector. Waits for rows an
# indexer holds (no SKIP LOCKED), as `settle` does.
NEWEST_WAITING_NOTES = (
    f"SELECT {NOTE_COLUMNS} FROM memories_note WHERE memory_id = %s AND partition = %s "
    "AND embedding IS NULL ORDER BY updated_at DESC LIMIT %s FOR UPDATE"
)


def settle_notes(memory_id: int, partition: str, *, notes: int, seconds: float) -> int:
    """Embed, now, the newest `notes` notes of a partition that still wait; memory_search
    calls it before it searches, so a note saved on the last call is found by meaning.

    Notes have no first-pass vector to pick the query's best waiting ones by, but they
    come one per save, so the newest few are nearly always all of them; a bulk import's
    older notes are left to the indexer. Rows an indexer holds are waited for, at most
    `seconds`; returns how many notes this call stored.
    """
    if notes <= 0:
        return 0
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            rows = _claim_within(cursor, seconds, NEWEST_WAITING_NOTES,
                                 [memory_id, partition, notes])
            if rows:
                _embed_and_store_notes(cursor, rows)
            return len(rows)
    except OperationalError as exc:
        if not _lock_budget_spent(exc):
            raise
        return 0  # an indexer held a note past the budget: it stores that note itself
