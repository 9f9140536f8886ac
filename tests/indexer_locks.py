"""An indexer caught in the middle of a batch: it has claimed a row and not yet stored it.

What memory_search's own embedding of notes (memories/search/freshness.py `settle_notes`) must
wait for within its budget, and give up on past it; query_memory's rescoring of waiting
facts (`rescore_waiting`) must not wait for at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def an_indexer_holding(claim: str, row_id, store: Callable, *, seconds: float):
    """Runs `claim` (a FOR UPDATE of the row `row_id`) in a transaction of another thread,
    holds the row for `seconds` (or until the block ends), then hands the rows to
    `store(cursor, rows)` and commits (a `store` that sets the rollback ends it as a failed
    batch would); yields an event set once that transaction has ended."""
    release, claimed, committed = threading.Event(), threading.Event(), threading.Event()

    def indexer() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(claim, [row_id])
                rows = cursor.fetchall()
                claimed.set()
                release.wait(seconds)
                store(cursor, rows)
            committed.set()
        finally:
            connection.close()

    thread = threading.Thread(target=indexer)
    thread.start()
    try:
        assert claimed.wait(30)
        yield committed
    finally:
        release.set()
        thread.join(30)
