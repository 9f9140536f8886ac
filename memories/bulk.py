"""Multi-row statements with array parameters, bound server-side.

The write path inserts tens of rows per call; Django's bulk_create spends more
time compiling them than Postgres spends storing them. One array per column is
one parameter each, whatever the row count (`INSERT ... SELECT FROM unnest(arrays)`),
and several inserts can go to the server as one statement (`WITH a AS (INSERT ...)`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import psycopg
from django.db import connection


class Statement(NamedTuple):
    sql: str
    params: list[Any]


def insert_statement(table: str, columns: Sequence[tuple[str, str]],
                     rows: Sequence[Sequence[Any]],
                     casts: dict[str, str] | None = None) -> Statement:
    """`INSERT` of `rows` (tuples in `columns` order); columns are (name, SQL element type).

    `casts` turns a column's array element into its stored type, e.g. text -> jsonb.
    """
    casts = casts or {}
    values = [list(column) for column in zip(*rows, strict=True)]
    # A column with one value in every row (the memory, the episode, the time...) goes
    # as one parameter instead of an array: half the values to encode on a typical write.
    varying = [i for i, column in enumerate(values)
               if any(v != column[0] or type(v) is not type(column[0]) for v in column)] or [0]
    # %b: arrays in binary; psycopg would otherwise escape each text element by regex.
    arrays = ", ".join(f"%b::{columns[i][1]}[]" for i in varying)
    aliases = ", ".join(columns[i][0] for i in varying)
    selected = ", ".join(
        f"v.{name}{casts.get(name, '')}" if i in varying
        else f"%s::{kind}{casts.get(name, '')}"
        for i, (name, kind) in enumerate(columns))
    constants = [values[i][0] for i in range(len(columns)) if i not in varying]
    names = ", ".join(name for name, _ in columns)
    return Statement(f"INSERT INTO {table} ({names}) SELECT {selected} "
                     f"FROM unnest({arrays}) AS v({aliases})",
                     [*constants, *(values[i] for i in varying)])


def combine(statements: Sequence[Statement]) -> Statement:
    """Several data-changing statements as one: all but the last become CTEs.

    They run on one snapshot in no set order, so none may depend on another's rows
    (foreign keys are fine: ours are checked at commit).
    """
    head, last = statements[:-1], statements[-1]
    if not head:
        return last
    ctes = ", ".join(f"s{i} AS ({s.sql})" for i, s in enumerate(head))
    return Statement(f"WITH {ctes} {last.sql}",
                     [p for s in statements for p in s.params])


def execute(sql: str, params: Sequence[Any] | Mapping[str, Any]) -> list[tuple]:
    """Run one statement in the current transaction; the rows it returns, if any."""
    connection.ensure_connection()
    # A server-side-binding cursor on Django's own connection (so: same transaction):
    # psycopg then sends arrays in binary from C instead of quoting every element
    # into SQL text in Python, which cost more than the statement itself.
    # wrap_database_errors turns psycopg's errors into Django's, which callers catch.
    started = time.monotonic()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall() if cursor.description else []
    if connection.queries_logged:
        # Where Django logs queries (DEBUG, CaptureQueriesContext), log these too, as
        # runnable SQL, so plans can be checked and statements replayed.
        with psycopg.ClientCursor(connection.connection) as client:
            text = client.mogrify(sql.replace("%b", "%s"), params)
        connection.queries_log.append(
            {"sql": text, "time": f"{time.monotonic() - started:.3f}"})
    return rows
