"""Erasing the text of recorded events in place, through the one UPDATE the append-only
trigger allows: the chain still verifies (audit/chain.py, chain formats 2 and 3)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.backends.utils import CursorWrapper

from audit.chain import RECALL_SAVED


def erase_memory_events(*, account_id: int, memory_id: int) -> int:
    """Erase the text of every event of one memory (call inside the deletion's transaction,
    which then records MEMORY_DELETED); how many were erased."""
    with erasing() as cursor:
        cursor.execute(f"{ERASE} WHERE account_id = %s AND memory_id = %s AND salt IS NOT NULL",
                       [account_id, memory_id])
        return cursor.rowcount


def erase_object_events(*, account_id: int, memory_id: int, partition: str,
                        object_ids: list[str], fact_ids: list[str]) -> list[int]:
    """Erase the events of one partition that carry the text of these objects; their seqs,
    in order, for the MEMORY_FORGOTTEN event the caller records next, in the same
    transaction.

    An event carries an object's text when it is about the object (`object_id`: a fact's
    created / superseded / dates_repaired, an entity's created, a note's created /
    updated), or, for a recall save, when it names one of `fact_ids` (its note says what
    the fact saved, and the save itself is deleted with the fact). Events record the
    partition they were written in, which is the partition of the objects they carry, so
    the search stays on the audit_by_partition index.
    """
    if not object_ids and not fact_ids:
        return []
    with erasing() as cursor:
        cursor.execute(
            f"{ERASE} WHERE account_id = %s AND memory_id = %s AND partition = %s "
            "AND salt IS NOT NULL AND (object_id = ANY(%s) "
            "OR (action = %s AND after ->> 'fact_id' = ANY(%s))) RETURNING seq",
            [account_id, memory_id, partition, object_ids, RECALL_SAVED, fact_ids])
        return sorted(row[0] for row in cursor.fetchall())


# The one UPDATE the append-only trigger allows (migrations 0008 and 0018): text and salt
# go (and, from format 3 on, the session id), nothing else about the event changes.
ERASE = ("UPDATE memories_auditevent SET before = NULL, after = NULL, salt = NULL, "
         "erased_at = now(), session_id = CASE WHEN format >= 3 THEN '' ELSE session_id END")


@contextmanager
def erasing() -> Iterator[CursorWrapper]:
    """A cursor on the erasure path, switched on for the statements inside only."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_erasing', 'on', true)")
        yield cursor
        cursor.execute("SELECT set_config('echo_memory.audit_erasing', 'off', true)")
