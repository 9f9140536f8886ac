"""Multi-row statements with array parameters, bound server-side.

The write path inserts tens of rows per call; Django's bulk_create spends more
time compiling them than Postgres spends storing them. One array per column is
one parameter each, whatever the row count (`INSERT ... SELECT FROM unnest(arrays)`),
and several inserts can go to the server as one statement (`WITH a AS (INSERT ...)`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, NamedTuple

import psycopg
from django.db import connection, models


class Statement(NamedTuple):
    sql: str
    params: Sequence[Any] | Mapping[str, Any]


def insert_statement(model: type[models.Model], rows: Sequence[Mapping[str, Any]],
                     casts: Mapping[str, str] | None = None,
                     through: Mapping[str, str] | None = None) -> Statement:
    """`INSERT` of `rows` into the model's table: each row maps column names to values, the
    same columns in every row. Each column's type comes from the model's field, so no
    column list is declared twice.

    `casts` turns a column's sent value into its stored type, e.g. {"before": "text"} sends
    text that the statement casts to the field's jsonb. `through` stores a column as an SQL
    expression of its sent value ("{}" in it), e.g. a tsvector made from text sent as such
    (with a cast for the sent type).
    """
    casts = casts or {}
    through = through or {}
    names = list(rows[0])
    types = _element_types(model)
    sent = {name: casts.get(name, types[name]) for name in names}
    values = [[row[name] for row in rows] for name in names]
    # A column with one value in every row (the memory, the episode, the time...) goes
    # as one parameter instead of an array: half the values to encode on a typical write.
    varying = [i for i, column in enumerate(values)
               if any(v != column[0] or type(v) is not type(column[0]) for v in column)] or [0]
    # %b: arrays in binary; psycopg would otherwise escape each text element by regex.
    arrays = ", ".join(f"%b::{sent[names[i]]}[]" for i in varying)
    aliases = ", ".join(names[i] for i in varying)
    selected = ", ".join(
        through.get(name, "{}").format(
            (f"v.{name}" if i in varying else f"%s::{sent[name]}")
            + (f"::{types[name]}" if name in casts and name not in through else ""))
        for i, name in enumerate(names))
    constants = [values[i][0] for i in range(len(names)) if i not in varying]
    return Statement(f"INSERT INTO {model._meta.db_table} ({', '.join(names)}) "
                     f"SELECT {selected} FROM unnest({arrays}) AS v({aliases})",
                     [*constants, *(values[i] for i in varying)])


@cache
def _element_types(model: type[models.Model]) -> dict[str, str]:
    """Each column's SQL type without its modifier: an array of varchar(200) would cut a
    longer text short where plain varchar lets the column refuse it."""
    types = {field.column: field.db_type(connection) for field in model._meta.concrete_fields}
    return {column: re.sub(r"\(.*\)$", "", kind) for column, kind in types.items() if kind}


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
    _log(sql, params, started)
    return rows


def execute_all(statements: Sequence[Statement]) -> list[list[tuple]]:
    """Run statements one after another, as `execute` would, but sent together: one wait
    for the server instead of one each. Each still takes its own snapshot when it starts,
    so a lock taken by one holds before the next reads."""
    connection.ensure_connection()
    started = time.monotonic()
    with connection.wrap_database_errors:
        cursors = [psycopg.Cursor(connection.connection) for _ in statements]
        try:
            with connection.connection.pipeline():
                for cursor, statement in zip(cursors, statements, strict=True):
                    cursor.execute(*statement)
            results = [cursor.fetchall() if cursor.description else [] for cursor in cursors]
        finally:
            for cursor in cursors:
                cursor.close()
    for statement in statements:
        _log(*statement, started)
    return results


@contextmanager
def meanwhile(sql: str, params: Sequence[Any] | Mapping[str, Any]) -> Iterator[None]:
    """Send a statement that returns no rows, and run the block while the server executes
    it (the two cores work at once); its error, if any, is raised as the block ends.

    The block must not use the database: the connection is busy in pipeline mode."""
    connection.ensure_connection()
    started = time.monotonic()
    with (connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor,
          connection.connection.pipeline()):
        cursor.execute(sql, params)
        yield
    _log(sql, params, started)


def _log(sql: str, params: Sequence[Any] | Mapping[str, Any], started: float) -> None:
    if connection.queries_logged:
        # Where Django logs queries (DEBUG, CaptureQueriesContext), log these too, as
        # runnable SQL, so plans can be checked and statements replayed.
        with psycopg.ClientCursor(connection.connection) as client:
            text = client.mogrify(sql.replace("%b", "%s"), params)
        connection.queries_log.append(
            {"sql": text, "time": f"{time.monotonic() - started:.3f}"})
