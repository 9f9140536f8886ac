"""An external database is checked before anything runs on it: PostgreSQL and pgvector
versions, read from the server itself.

Two real servers: the embedded PostgreSQL (with pgvector) reached through DATABASE_URL as
production reaches its own, and the machine's distribution PostgreSQL 15 on 127.0.0.1:5432
(no pgvector), where there is one.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from packaging.version import Version

from echomem.runtime import (
    EMBEDDED_URL_VARIABLE,
    PGVECTOR_MINIMUM,
    POSTGRESQL_MINIMUM,
    DatabaseVersions,
    check_external_database,
    database_versions,
    server_problem,
)
from tests.cli.conftest import cli_env, run_cli
from tests.harness import free_port

MACHINE_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="module")
def machine_postgres() -> str:
    try:
        with psycopg.connect(MACHINE_POSTGRES, connect_timeout=2):
            pass
    except psycopg.OperationalError:
        pytest.skip(f"no PostgreSQL answers at {MACHINE_POSTGRES}")
    return MACHINE_POSTGRES


@pytest.fixture
def empty_embedded_database():
    """A new database on the test session's embedded server, addressed as DATABASE_URL."""
    import os

    session_url = os.environ[EMBEDDED_URL_VARIABLE]
    name = f"external_{uuid.uuid4().hex[:8]}"
    admin = session_url.replace("/echomem?", "/postgres?", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield session_url.replace("/echomem?", f"/{name}?", 1)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.mark.parametrize("command", ["migrate", "serve", "worker"])
def test_the_machine_postgres_without_pgvector_is_refused_naming_both_versions(
        tmp_path, machine_postgres, command):
    found = database_versions(machine_postgres)
    assert found.vector_available is None  # the premise: a distribution server without it
    args = ["serve", "--port", str(free_port())] if command == "serve" else [command]
    env = cli_env(tmp_path / "home", DATABASE_URL=machine_postgres,
                  REDIS_URL="redis://127.0.0.1:6379/6")
    result = run_cli(*args, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"echo-memory: DATABASE_URL={machine_postgres} points at PostgreSQL {found.server} "
        f"without the pgvector extension, and Echo Memory needs pgvector {PGVECTOR_MINIMUM} or "
        "newer; install pgvector on that server "
        "(https://github.com/pgvector/pgvector#installation) or unset DATABASE_URL to use the "
        "embedded database, which includes it.")
    # Nothing was created on the refused server.
    with psycopg.connect(machine_postgres) as conn:
        assert conn.execute("SELECT to_regclass('django_migrations')").fetchone()[0] is None


def test_the_embedded_postgres_offers_what_the_migrations_need(empty_embedded_database):
    found = database_versions(empty_embedded_database)
    assert found.server_num >= POSTGRESQL_MINIMUM * 10000
    assert Version(found.vector_available) >= Version(PGVECTOR_MINIMUM)
    assert found.vector_installed is None and found.trgm
    check_external_database(empty_embedded_database)  # raises on any problem


def test_an_empty_database_with_pgvector_is_migrated_through_database_url(
        tmp_path, empty_embedded_database):
    env = cli_env(tmp_path / "home", DATABASE_URL=empty_embedded_database)
    result = run_cli("migrate", env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    with psycopg.connect(empty_embedded_database) as conn:
        installed = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        halfvec = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'memories_fact'::regclass AND attname = 'embedding'").fetchone()[0]
    assert Version(installed) >= Version(PGVECTOR_MINIMUM)
    assert halfvec == "halfvec(384)"


def test_a_postgresql_older_than_django_supports_is_named_with_both_versions():
    old = DatabaseVersions(server="13.16", server_num=130016, vector_available="0.8.0",
                           vector_installed=None, trgm=True)
    assert server_problem(old) == (
        "points at PostgreSQL 13.16 and Echo Memory needs PostgreSQL 14 or newer; upgrade that "
        "server or unset DATABASE_URL to use the embedded database.")


def test_a_server_without_pg_trgm_is_named():
    bare = DatabaseVersions(server="16.4", server_num=160004, vector_available="0.8.0",
                            vector_installed=None, trgm=False)
    assert "PostgreSQL 16.4 without the pg_trgm extension" in server_problem(bare)
