"""The indexer: embeds newly written facts and keeps the word statistics BM25 needs.

A write commits without waiting for it; until a fact is indexed it is still found
by words (its tsvector is a generated column), only not by meaning. Where it runs:

- `inline`: right after the write commits, in the same thread (tests, tiny boxes);
- `thread`: a background thread per web process (the single box's default);
- `celery`: a Celery task on the workers (the default when a broker is configured);
- `manual`: nothing is scheduled; `echo-memory index` (e.g. from cron) catches up.

Two things keep a fresh fact findable by meaning whatever the backlog:

- Fair turns: the queue is one per (memory, partition). Each batch takes a share from
  every queue that waits, oldest queue first, so one tenant's bulk import costs another
  tenant's single fact at most one batch's wait, not the whole backlog.
- Read-your-writes: a waiting fact is searched by its first-pass vector, and
  `rescore_waiting`, called by query_memory, embeds the query's best waiting candidates
  on the spot (bounded in facts and seconds) with the indexer's context on an int8 copy of
  the model, ranks them by those vectors and keeps each in place of the fact's first-pass
  vector until the indexer stores the settled one; it never waits for the indexer.
  memory_search embeds and stores the partition's newest waiting notes before it searches
  (`settle_notes`), since the indexer takes notes only once no fact waits.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import OperationalError, connection, transaction

from echomem.db import LOCK_NOT_AVAILABLE
from memories.notes import words as note_words
from memories.notes.text import note_head
from memories.search import vector_params
from memories.search.embeddings import get_embedder

logger = logging.getLogger(__name__)
BATCH_SIZE = 64
# What embedding one waiting fact has cost this process lately (a running mean; the first
# guess is two cores' cost with context), to size query_memory's settling to its budget.
_seconds_per_fact = 0.02
# With several queues waiting, no queue takes more than this fraction of a batch.
SHARED_BATCH_PARTS = 4

def _context_facts() -> int:
    """How many facts before it in the same episode a fact is embedded with.

    A reply ("Yes, last week!") means little without the turn it answers: two facts of
    context lifted LoCoMo recall@10 from 0.701 to 0.767 (docs/benchmarks.md). Episodes
    of unrelated, self-contained facts may prefer ECHO_MEMORY_EMBED_CONTEXT=0.
    """
    return settings.ECHO_MEMORY_EMBED_CONTEXT


def index_pending(*, limit: int | None = None, progress=None) -> int:
    """Index waiting facts, oldest first, in batches; returns how many were indexed.

    Batches are claimed with SKIP LOCKED, so any number of indexers can run at once.
    `progress`, if given, is called with the size of each finished batch.
    """
    done = 0
    while limit is None or done < limit:
        batch = BATCH_SIZE if limit is None else min(BATCH_SIZE, limit - done)
        indexed = _index_batch(batch)
        if not indexed:
            break
        done += indexed
        if progress is not None:
            progress(indexed)
    return done


# The claim of a task that names its facts (memories/tasks.py): those of them still waiting,
# locked. One another indexer holds is skipped: that indexer stores it (or, if it dies, its
# transaction rolls back and the fact waits for the task's redelivery or the next sweep).
CLAIM_IDS = (
    "SELECT id, search_text, episode_id, position FROM memories_fact "
    "WHERE id = ANY(%s::uuid[]) AND embedding IS NULL "
    "ORDER BY created_at, position FOR UPDATE SKIP LOCKED"
)


def index_fact_ids(ids: Sequence[str], *,
                   claimed: Callable[[list], None] | None = None) -> int:
    """Embed and index those of these facts that still wait; returns how many it did.

    Idempotent: a fact already indexed (by an earlier delivery of the same task, a sweep or
    query_memory's settle) is not claimed again, so it is embedded and counted once however
    often this runs. `claimed`, if given, is called with the claimed ids inside the
    transaction, before anything is stored.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(CLAIM_IDS, [list(ids)])
        rows = cursor.fetchall()
        if not rows:
            return 0
        if claimed is not None:
            claimed([str(row[0]) for row in rows])
        _embed_and_store(cursor, rows)
    return len(rows)


def pending_count() -> int:
    from memories.models import Fact, Note

    return (Fact.objects.filter(embedding__isnull=True).count()
            + Note.objects.filter(embedding__isnull=True).count())


def facts_pending_vector(memory_id: int, partition: str) -> int:
    """How many of the partition's facts still wait for the model's vector (found by words
    and their first-pass vector until then)."""
    return partition_counts(memory_id, partition)[0]


def partition_counts(memory_id: int, partition: str) -> tuple[int, int]:
    """The partition's facts waiting for their vector, and those indexed (the word
    statistics' count, replaced versions included), in one round trip."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT count(*) FROM memories_fact WHERE memory_id = %s "
                       "AND partition = %s AND embedding IS NULL), (SELECT "
                       "coalesce(max(documents), 0) FROM memories_corpusstat "
                       "WHERE memory_id = %s AND partition = %s)",
                       [memory_id, partition, memory_id, partition])
        pending, indexed = cursor.fetchone()
        return pending, indexed


def _index_batch(size: int) -> int:
    return _index_facts(size) or _index_notes(size)


# Every (memory, partition) with waiting facts, by a skip scan of fact_index_queue (one
# index probe per queue, however long the queues), the longest-waiting first.
WAITING_QUEUES = (
    "WITH RECURSIVE queues AS ("
    "(SELECT memory_id, partition FROM memories_fact WHERE embedding IS NULL "
    "ORDER BY memory_id, partition LIMIT 1) "
    "UNION ALL "
    "SELECT n.memory_id, n.partition FROM queues q CROSS JOIN LATERAL ("
    "SELECT memory_id, partition FROM memories_fact WHERE embedding IS NULL "
    "AND (memory_id, partition) > (q.memory_id, q.partition) "
    "ORDER BY memory_id, partition LIMIT 1) n) "
    "SELECT q.memory_id, q.partition FROM queues q CROSS JOIN LATERAL ("
    "SELECT created_at, position FROM memories_fact f WHERE f.embedding IS NULL "
    "AND f.memory_id = q.memory_id AND f.partition = q.partition "
    "ORDER BY created_at, position LIMIT 1) oldest "
    "ORDER BY oldest.created_at, oldest.position LIMIT %s"
)
# A share of each queue's oldest facts, locked; another indexer's claims are skipped.
CLAIM_SHARES = (
    "SELECT f.id, f.search_text, f.episode_id, f.position "
    "FROM unnest(%s::bigint[], %s::text[]) WITH ORDINALITY AS q(memory_id, partition, turn) "
    "CROSS JOIN LATERAL (SELECT id, search_text, episode_id, position, created_at "
    "FROM memories_fact f WHERE f.memory_id = q.memory_id AND f.partition = q.partition "
    "AND f.embedding IS NULL ORDER BY f.created_at, f.position LIMIT %s "
    "FOR UPDATE SKIP LOCKED) f ORDER BY q.turn, f.created_at, f.position"
)


def _share(size: int, queues: int) -> int:
    """Facts per queue in a batch of at most `size`.

    Rounded down (at least one each; at most `size` queues a batch), so a batch never
    locks more than it embeds. Alone, a queue takes the whole batch (throughput); with
    others waiting, a quarter at most, so that a small write's wait (the rest of the
    running batch, then one more) stays short while a bulk import is being embedded.
    """
    if queues == 1:
        return size
    return max(1, min(size // queues, size // SHARED_BATCH_PARTS))


def _index_facts(size: int) -> int:
    """One batch: up to `size` facts, an equal share from each waiting queue.

    A queue with fewer waiting facts than its share leaves the batch smaller rather than
    making the others wait for a second pass.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(WAITING_QUEUES, [size])
        queues = cursor.fetchall()
        if not queues:
            return 0
        cursor.execute(CLAIM_SHARES, [[q[0] for q in queues], [q[1] for q in queues],
                                      _share(size, len(queues))])
        rows = cursor.fetchall()
        if not rows:
            return 0
        _embed_and_store(cursor, rows)
    return len(rows)


def _embed_and_store(cursor, rows: list[tuple]) -> None:
    """Vectors (with context) and word statistics for claimed (id, search_text, episode_id,
    position) rows: what the indexer stores."""
    vectors = get_embedder().embed(_texts_with_context(cursor, rows))
    ids = [row[0] for row in rows]
    store_embeddings(cursor, "memories_fact", ids, vectors)
    count_terms(cursor, ids)


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


# Re-embedding after a model change walks each table by id. Waiting rows are left to the
# indexer (it runs the new model already); a row is waited for, not skipped, since the walk
# passes it only once.
REEMBED = {
    "facts": "SELECT id, search_text, episode_id, position FROM memories_fact "
             "WHERE embedding IS NOT NULL AND id > %s ORDER BY id LIMIT %s FOR UPDATE",
    "notes": "SELECT id, title, category, what, why, impact, tags FROM memories_note "
             "WHERE embedding IS NOT NULL AND id > %s ORDER BY id LIMIT %s FOR UPDATE",
    "entities": "SELECT id, name FROM memories_entity "
                "WHERE name_embedding IS NOT NULL AND id > %s ORDER BY id LIMIT %s FOR UPDATE",
}
FIRST_ID = "00000000-0000-0000-0000-000000000000"


def reembed_batch(table: str, *, after: str | None,
                  size: int = BATCH_SIZE) -> tuple[int, str | None]:
    """Embed again, with the model this process runs, up to `size` stored vectors of
    `table` (facts, notes or entities) past id `after`; returns how many and the last id
    (None when the table is done). Word statistics are left alone: the words are the same."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(REEMBED[table], [after or FIRST_ID, size])
        rows = cursor.fetchall()
        if not rows:
            return 0, None
        ids = [row[0] for row in rows]
        if table == "facts":
            store_embeddings(cursor, "memories_fact", ids,
                             get_embedder().embed(_texts_with_context(cursor, rows)))
        elif table == "notes":
            store_embeddings(cursor, "memories_note", ids, _note_vectors(rows))
        else:
            cursor.execute(
                "UPDATE memories_entity e SET name_embedding = v.embedding "
                "FROM unnest(%s::uuid[], %s::vector[]) AS v(id, embedding) WHERE e.id = v.id",
                [ids, [vector_params.vector(vector) for vector in get_embedder().embed(
                    [row[1] for row in rows])]])
    return len(rows), str(rows[-1][0])


def _note_vectors(rows: list[tuple]):
    """Vectors of note rows that begin (id, title, category, what, why, impact, tags)."""
    return get_embedder().embed([
        note_head(title=title, category=category, what=what, why=why, impact=impact,
                  tags=tags if isinstance(tags, list) else json.loads(tags))
        for _, title, category, what, why, impact, tags, *_ in rows])


# What embedding a note reads: _note_vectors' columns, then where its words are kept.
NOTE_COLUMNS = "id, title, category, what, why, impact, tags, memory_id, partition"


def _index_notes(size: int) -> int:
    """Embed notes saved or updated since (a save clears a note's embedding); their word
    statistics are counted at search time (memories/search/hybrid.py NOTES)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {NOTE_COLUMNS} FROM memories_note "
            "WHERE embedding IS NULL ORDER BY updated_at LIMIT %s FOR UPDATE SKIP LOCKED",
            [size],
        )
        rows = cursor.fetchall()
        if rows:
            _embed_and_store_notes(cursor, rows)
    return len(rows)


def _embed_and_store_notes(cursor, rows: list[tuple]) -> None:
    """Vectors and words for claimed note rows (NOTE_COLUMNS): what the indexer and
    `settle_notes` both store."""
    ids = [row[0] for row in rows]
    store_embeddings(cursor, "memories_note", ids, _note_vectors(rows))
    note_words.index_words(cursor, ids, get_embedder())
    # An edit may have dropped words that no other note holds.
    for memory_id, partition in sorted({(row[7], row[8]) for row in rows}):
        note_words.prune_words(cursor, memory_id, partition)


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


def store_embeddings(cursor, table: str, ids: list, vectors) -> None:
    """One UPDATE for a batch; `table` is one of ours, never input. A fact's first-pass
    vector goes as its settled one arrives."""
    clear = (", first_pass_embedding = NULL, first_pass_from_model = false"
             if table == "memories_fact" else "")
    cursor.execute(
        f"UPDATE {table} f SET embedding = v.embedding{clear} "
        "FROM unnest(%s::uuid[], %s::halfvec[]) AS v(id, embedding) WHERE f.id = v.id",
        [ids, [vector_params.halfvec(vector) for vector in vectors]],
    )


def count_terms(cursor, ids: list) -> None:
    """Adds these facts to the BM25 word statistics of their partitions.

    Runs once per fact, when it is indexed; in term order so concurrent indexers lock alike.
    """
    cursor.execute(
        "INSERT INTO memories_termstat (memory_id, partition, term, df) "
        "SELECT memory_id, partition, lexeme, count(*) FROM memories_fact, "
        "unnest(tsvector_to_array(search_vector)) AS lexeme WHERE id = ANY(%s) "
        "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 "
        "ON CONFLICT (memory_id, partition, term) "
        "DO UPDATE SET df = memories_termstat.df + EXCLUDED.df", [ids],
    )
    cursor.execute(
        "INSERT INTO memories_corpusstat (memory_id, partition, documents, tokens) "
        "SELECT memory_id, partition, count(*), sum(length(search_vector)) "
        "FROM memories_fact WHERE id = ANY(%s) GROUP BY 1, 2 ORDER BY 1, 2 "
        "ON CONFLICT (memory_id, partition) DO UPDATE SET "
        "documents = memories_corpusstat.documents + EXCLUDED.documents, "
        "tokens = memories_corpusstat.tokens + EXCLUDED.tokens", [ids],
    )


def uncount_terms(cursor, ids: list) -> None:
    """Takes these facts, about to be deleted, out of the word statistics, if they were
    counted (count_terms runs when a fact is indexed, so: those with an embedding); a word
    no remaining fact uses leaves the table, so forgotten words are not kept as statistics.

    Word rows are locked in term order, as count_terms takes them, so a concurrent indexer
    and a forget wait for each other instead of deadlocking.
    """
    cursor.execute(
        "WITH gone AS (SELECT memory_id, partition, lexeme AS term, count(*) AS n "
        "FROM memories_fact, unnest(tsvector_to_array(search_vector)) AS lexeme "
        "WHERE id = ANY(%s) AND embedding IS NOT NULL GROUP BY 1, 2, 3), "
        "locked AS (SELECT t.id, gone.n FROM memories_termstat t JOIN gone "
        "USING (memory_id, partition, term) ORDER BY t.memory_id, t.partition, t.term "
        "FOR UPDATE OF t) "
        "UPDATE memories_termstat t SET df = greatest(t.df - locked.n, 0) FROM locked "
        "WHERE t.id = locked.id RETURNING t.id, t.df", [ids],
    )
    unused = [row_id for row_id, df in cursor.fetchall() if df <= 0]
    if unused:
        cursor.execute("DELETE FROM memories_termstat WHERE id = ANY(%s)", [unused])
    cursor.execute(
        "UPDATE memories_corpusstat c SET documents = greatest(c.documents - g.documents, 0), "
        "tokens = greatest(c.tokens - g.tokens, 0) FROM (SELECT memory_id, partition, "
        "count(*) AS documents, "
        "sum(length(search_vector)) AS tokens FROM memories_fact "
        "WHERE id = ANY(%s) AND embedding IS NOT NULL GROUP BY 1, 2) g "
        "WHERE c.memory_id = g.memory_id AND c.partition = g.partition", [ids],
    )


def _texts_with_context(cursor, rows: list[tuple]) -> list[str]:
    context_facts = _context_facts()
    if not context_facts:
        return [row[1] for row in rows]
    cursor.execute(
        "SELECT f.id, string_agg(p.search_text, ' ' ORDER BY p.position) FROM memories_fact f "
        "JOIN memories_fact p ON p.episode_id = f.episode_id "
        "AND p.position BETWEEN f.position - %s AND f.position - 1 "
        "WHERE f.id = ANY(%s) GROUP BY f.id", [context_facts, [row[0] for row in rows]],
    )
    context = dict(cursor.fetchall())
    return [f"{context[row[0]]} {row[1]}" if context.get(row[0]) else row[1] for row in rows]


def schedule(fact_ids: Sequence | None = None) -> None:
    """Called after a write commits: index its facts the way this deployment runs.

    On Celery, the facts the write created go to the workers by id, a batch per task; a
    write that names no facts (a note) sends a sweep of whatever waits.
    """
    mode = settings.ECHO_MEMORY_INDEXING
    if mode == "inline":
        index_pending()
    elif mode == "celery":
        _send_to_workers(fact_ids)
    elif mode == "thread":
        background().wake()


def _send_to_workers(fact_ids: Sequence | None) -> None:
    from kombu.exceptions import OperationalError as BrokerUnavailable

    from memories.tasks import embed_facts, index_waiting

    try:
        if fact_ids is None:
            index_waiting.delay()
            return
        ids = [str(fact_id) for fact_id in fact_ids]
        for start in range(0, len(ids), BATCH_SIZE):
            embed_facts.delay(ids[start:start + BATCH_SIZE])
    except BrokerUnavailable as exc:
        # The write has committed; its facts are found by words, the newest by meaning too
        # (query_memory's settle), and beat's sweep embeds them once the broker is back.
        logger.error("could not send facts to the workers (%s); the sweep will embed them",
                     exc.__class__.__name__)


class _Background(threading.Thread):
    """One per process; sleeps until a write wakes it, and sweeps now and then anyway."""

    SWEEP_SECONDS = 60.0

    def __init__(self) -> None:
        super().__init__(name="echo-memory-indexer", daemon=True)
        self.pid = os.getpid()
        self._wake = threading.Event()
        self._stopping = threading.Event()

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float) -> None:
        """Finish the running batch (a batch is one transaction: one cut short would only be
        redone) and end. A daemon thread left inside ONNX Runtime while the process exits
        can crash the exit, so a web worker that shuts down waits for this."""
        self._stopping.set()
        self._wake.set()
        self.join(timeout)

    def run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self.SWEEP_SECONDS)
            self._wake.clear()
            try:
                while not self._stopping.is_set() and _index_batch(BATCH_SIZE):
                    pass
            except Exception:
                logger.exception("indexing failed; will retry at the next write or sweep")
            finally:
                connection.close()


_background: _Background | None = None
_background_lock = threading.Lock()


def background() -> _Background:
    """The process's indexer thread, started on first use (and again after a fork)."""
    global _background
    with _background_lock:
        if _background is None or _background.pid != os.getpid():
            _background = _Background()
            _background.start()
            _background.wake()  # catch up on anything left by an earlier process
        return _background


def stop_background(timeout: float) -> None:
    """Stop this process's indexer thread, if it runs, after its current batch."""
    with _background_lock:
        running = _background if _background is not None and \
            _background.pid == os.getpid() else None
    if running is not None:
        running.stop(timeout)
