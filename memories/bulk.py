"""Multi-row INSERTs as one `INSERT ... SELECT FROM unnest(arrays)` statement.

The write path inserts tens of rows per call; Django's bulk_create spends more
time compiling them than Postgres spends storing them. One array per column is
one parameter each, whatever the row count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import connection


def insert(table: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]],
           casts: dict[str, str] | None = None) -> None:
    """Insert `rows` (tuples in `columns` order); columns are (name, SQL array element type).

    `casts` turns a column's array element into its stored type, e.g. text -> jsonb.
    """
    if not rows:
        return
    casts = casts or {}
    names = ", ".join(name for name, _ in columns)
    arrays = ", ".join(f"%s::{kind}[]" for _, kind in columns)
    selected = ", ".join(f"v.{name}{casts.get(name, '')}" for name, _ in columns)
    params = [list(column) for column in zip(*rows, strict=True)]
    connection.ensure_connection()
    # A server-side-binding cursor on Django's own connection (so: same transaction):
    # psycopg then sends the arrays in binary from C instead of quoting every element
    # into SQL text in Python, which cost more than the insert itself.
    # wrap_database_errors turns psycopg's errors into Django's, which callers catch.
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({names}) SELECT {selected} "
            f"FROM unnest({arrays}) AS v({names})", params,
        )
