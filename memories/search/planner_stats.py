"""Planner statistics for a box that fills faster than autovacuum looks at it.

Until a table is first analyzed, Postgres guesses 0.5% for every equality, so
`memory_id = 1 AND partition = 'shared'` looks as selective as a whole unique key.
The live-edge probe of write_episode then ties between the unique index and
fact_live_recent, and once the unique index's B-tree is a level deeper the planner
takes fact_live_recent: every probe reads the memory's whole live set. On a fresh box
loaded in bulk that made 500-fact episodes 10x slower (0.09 -> 0.95 s each at 17k
facts) until autovacuum's next round, up to a minute later. So the write path
analyzes, once, a watched table that has grown past a few pages without statistics;
the check is one catalog query at most once a second, and stops for good once
every watched table has statistics.
"""

from __future__ import annotations

import math
import threading
import time

from django.db import connection

WATCHED = ("memories_fact", "memories_entity", "memories_termstat")
# Below this a table is a few hundred rows; any plan over it is fast.
MIN_BYTES = 256 * 1024
CHECK_EVERY = 1.0

_lock = threading.Lock()
# When to look next; infinity once every watched table has statistics.
_next_check = 0.0


def analyze_unanalyzed_tables() -> list[str]:
    """ANALYZE each watched table that has data but no statistics; returns their names."""
    global _next_check
    now = time.monotonic()
    with _lock:
        if now < _next_check:
            return []
        _next_check = now + CHECK_EVERY
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_relation_size(c.oid) >= %s FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relname = ANY(%s) AND NOT EXISTS "
            "(SELECT 1 FROM pg_stats s WHERE s.schemaname = n.nspname "
            "AND s.tablename = c.relname)", [MIN_BYTES, list(WATCHED)],
        )
        missing = cursor.fetchall()
        due = [name for name, big_enough in missing if big_enough]
        for name in due:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(name)}")
    if not missing:
        _next_check = math.inf
    return due


def analyze_during_bulk_load(table: str = "memories_fact") -> None:
    """ANALYZE `table` inside a long bulk load's own transaction (it counts the
    transaction's own new rows): a memory that was empty when the load began looks empty
    to the planner until then, and every live-edge probe of the load would read the
    memory's whole fact list through the memory_id index instead of probing the unique
    live-edge index (an import of 20k facts: 212 s, 13 s with this). It holds ANALYZE's
    lock on the table until the load commits, so a load calls it a few times only."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")


def forget() -> None:
    """Check again on the next write (tests, or after statistics were cleared)."""
    global _next_check
    _next_check = 0.0
