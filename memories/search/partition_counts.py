"""What a query decides its plans by, read in one statement: how many of the partition's
facts wait for their vector (they are searched by their first-pass vector), how many are
indexed (a small partition is searched exactly), and the fact table's size (ef_search
grows with it past a million facts)."""

from __future__ import annotations

from typing import NamedTuple

from echomem import bulk


class Counts(NamedTuple):
    """The partition's facts waiting for their vector, those indexed (the word statistics'
    count, replaced versions included), and the whole fact table's size as the planner
    last estimated it (0 before the first ANALYZE)."""

    pending: int
    indexed: int
    table: int


def partition_counts(memory_id: int, partition: str) -> Counts:
    """The partition's Counts, in one round trip."""
    return counts_from(bulk.execute(*statement(memory_id, partition)))


def statement(memory_id: int, partition: str) -> bulk.Statement:
    """partition_counts' statement, for a caller that sends it with others (bulk.execute_all)."""
    return bulk.Statement(
        "SELECT (SELECT count(*) FROM memories_fact WHERE memory_id = %s "
        "AND partition = %s AND embedding IS NULL), (SELECT "
        "coalesce(max(documents), 0) FROM memories_corpusstat "
        "WHERE memory_id = %s AND partition = %s), "
        "(SELECT greatest(reltuples, 0)::bigint FROM pg_class "
        "WHERE oid = 'memories_fact'::regclass)",
        [memory_id, partition, memory_id, partition])


def counts_from(rows: list[tuple]) -> Counts:
    """Counts from statement's rows."""
    return Counts(*rows[0])
