"""The indexer: embeds newly written facts and keeps the word statistics BM25 needs.

A write commits without waiting for it; until a fact is indexed it is still found
by words (its tsvector is a generated column), only not by meaning. Where it runs:

- `inline`: right after the write commits, in the same thread (tests, tiny boxes);
- `thread`: a background thread per web process (the single box's default);
- `celery`: a Celery task on the workers (the default when a broker is configured);
- `manual`: nothing is scheduled; `echo-memory index` (e.g. from cron) catches up.

Three things keep a fresh fact findable by meaning, and fast to ask about, whatever the
backlog:

- Fair turns: the queue is one per (memory, partition). Each batch takes a share from
  every queue that waits, oldest queue first, so one tenant's bulk import costs another
  tenant's single fact at most one batch's wait, not the whole backlog.
- Queries first (the `thread` mode): the thread embeds a batch in short turns and begins
  each only once no query of its process runs (query_turns.py), so a question asked while
  it catches up does not share the two cores with a whole batch.
- Read-your-writes: a waiting fact is searched by its first-pass vector, and
  `rescore_waiting`, called by query_memory, embeds the query's best waiting candidates
  on the spot (bounded in facts and seconds) with the indexer's context on an int8 copy of
  the model, ranks them by those vectors and keeps each in place of the fact's first-pass
  vector until the indexer stores the settled one; it never waits for the indexer.
  memory_search embeds and stores the partition's newest waiting notes before it searches
  (`settle_notes`), since the indexer takes notes only once no fact waits. Both live in
  freshness.py; what they and the indexer store, in storing.py.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence

from django.conf import settings
from django.db import connection, transaction

from memories.search import task_senders

# What callers reach through the indexer: read-your-writes (freshness.py) and what it
# stores (storing.py), below it.
from memories.search.storing import NOTE_COLUMNS, _embed_and_store, _embed_and_store_notes

logger = logging.getLogger(__name__)
BATCH_SIZE = 64
# With several queues waiting, no queue takes more than this fraction of a batch.
SHARED_BATCH_PARTS = 4
# An indexer that leaves rows waiting because another transaction held them looks again
# this soon, then twice as late each time up to the sweep's interval. The holder is most
# often another indexer, done within a batch (a second or two); when it rolled back
# instead (a killed worker, a failed batch) or committed without a vector (a query storing
# a provisional one, a write replacing the fact), nothing else would wake an indexer for
# those rows: the thread would sleep to its sweep, a Celery chain would end for good.
RETRY_SECONDS = 0.5
SWEEP_SECONDS = 60.0


def next_retry(pause: float) -> float:
    """The pause after `pause` (0: the first) while rows still wait: doubling, bounded."""
    return min(max(pause * 2, RETRY_SECONDS), SWEEP_SECONDS)


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


def still_waiting(ids: Sequence[str]) -> list[str]:
    """Those of these facts that still wait for their vector (deleted ones do not)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM memories_fact WHERE id = ANY(%s::uuid[]) "
                       "AND embedding IS NULL", [list(ids)])
        return [str(row[0]) for row in cursor.fetchall()]


# Whether a fact or note that already waited at a moment still waits. The facts' probe reads
# fact_index_queue (waiting facts only) and stops at the first old enough.
WAITING_SINCE = (
    "SELECT EXISTS (SELECT 1 FROM memories_fact WHERE embedding IS NULL AND created_at <= %s) "
    "OR EXISTS (SELECT 1 FROM memories_note WHERE embedding IS NULL AND updated_at <= %s)"
)


def waiting_since(moment) -> bool:
    """Whether anything written at or before `moment` still waits for its vector."""
    with connection.cursor() as cursor:
        cursor.execute(WAITING_SINCE, [moment, moment])
        return cursor.fetchone()[0]


def pending_count() -> int:
    from memories.models import Fact, Note

    return (Fact.objects.filter(embedding__isnull=True).count()
            + Note.objects.filter(embedding__isnull=True).count())


def _index_batch(size: int, *, give_way: bool = False) -> int:
    return _index_facts(size, give_way=give_way) or _index_notes(size)


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


def _index_facts(size: int, *, give_way: bool = False) -> int:
    """One batch: up to `size` facts, an equal share from each waiting queue.

    A queue with fewer waiting facts than its share leaves the batch smaller rather than
    making the others wait for a second pass. `give_way`: embedded in turns that let this
    process's queries go first (query_turns.py).
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
        _embed_and_store(cursor, rows, give_way=give_way)
    return len(rows)


def _index_notes(size: int) -> int:
    """Embed notes saved or updated since (a save clears a note's embedding); their word
    statistics are counted at search time (memories/search/candidates.py NOTES)."""
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

    embed_facts, index_waiting = task_senders.senders()
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


# Whether anything waits for its vector (both probes are index-only on the waiting queues).
ANYTHING_WAITING = (
    "SELECT EXISTS (SELECT 1 FROM memories_fact WHERE embedding IS NULL) "
    "OR EXISTS (SELECT 1 FROM memories_note WHERE embedding IS NULL)"
)


def _anything_waiting() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(ANYTHING_WAITING)
        return cursor.fetchone()[0]


class _Background(threading.Thread):
    """One per process; sleeps until a write wakes it, and sweeps now and then anyway.

    A pass ends at the first batch that claims nothing, which is not always an empty queue:
    the rows left may be held by another transaction (another process's indexer, a query
    storing its provisional vector, a write replacing the fact). If that one rolls back (a
    worker killed mid-batch, a lock timeout), nothing wakes this thread for those rows; so
    while anything still waits after a pass, or when a pass failed, the next look comes in
    RETRY_SECONDS, doubling up to the sweep's interval (`next_retry`), instead of at the
    sweep. Should the thread die all the same (an error outside a pass), it says so in the
    log and `background()`, which every write calls, starts another.
    """

    def __init__(self) -> None:
        super().__init__(name="echo-memory-indexer", daemon=True)
        self.pid = os.getpid()
        self._wake = threading.Event()
        self._stopping = threading.Event()

    @property
    def stopped(self) -> bool:
        """Told to stop (the process is shutting down), as opposed to dead of an error."""
        return self._stopping.is_set()

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
        try:
            self._passes()
        except BaseException:
            # Not an Exception of a pass (those are retried): e.g. closing the connection
            # failed. Logged here, with its traceback, instead of Python's bare print.
            logger.critical("the indexer thread stopped on an error; the next write "
                            "starts another", exc_info=True)

    def _passes(self) -> None:
        pause, retry = SWEEP_SECONDS, 0.0
        while not self._stopping.is_set():
            self._wake.wait(pause)
            self._wake.clear()
            left = True
            try:
                while not self._stopping.is_set() and _index_batch(BATCH_SIZE,
                                                                    give_way=True):
                    pass
                left = _anything_waiting()
            except Exception:
                logger.exception("indexing failed; will retry in %.1f s", next_retry(retry))
            finally:
                connection.close()
            if left:
                retry = next_retry(retry)
                pause = retry
            else:
                pause, retry = SWEEP_SECONDS, 0.0


_background: _Background | None = None
_background_lock = threading.Lock()


def background() -> _Background:
    """The process's indexer thread, started on first use, again after a fork, and again
    if it died."""
    global _background
    with _background_lock:
        if _background is not None and _background.pid == os.getpid() \
                and not _background.is_alive() and not _background.stopped:
            logger.error("the indexer thread had died; starting another")
            _background = None
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
