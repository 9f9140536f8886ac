"""Everything that must be true before Django starts: a writable home and a usable database.

The CLI and manage.py both call `prepare()`, so a misconfiguration is reported as
one sentence naming the variable and the fix, before any traceback can happen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from echomem import embedded_db
from echomem.errors import ConfigurationError
from echomem.home import echo_home, ensure_writable_home

EMBEDDED_URL_VARIABLE = "ECHO_MEMORY_EMBEDDED_DATABASE_URL"


@dataclass(frozen=True)
class Runtime:
    home: Path
    database_url: str
    embedded: bool


def prepare(*, start_database: bool = True) -> Runtime:
    """Check the home, then start or check the database, then set Django up.

    With `start_database=False` (e.g. `manage.py check --deploy`) no database is touched.
    """
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
    external = os.environ.get("DATABASE_URL", "").strip()
    # Production (external database and its own SECRET_KEY) keeps nothing in the home.
    needs_home = not external or not os.environ.get("SECRET_KEY")
    home = ensure_writable_home() if needs_home else echo_home()
    if start_database and external:
        check_external_database(external)
    elif start_database:
        database = embedded_db.start(home)
        os.environ[EMBEDDED_URL_VARIABLE] = database.url
    import django

    django.setup()
    url = external or os.environ.get(EMBEDDED_URL_VARIABLE, "")
    return Runtime(home=home, database_url=url, embedded=not external)


def check_external_database(url: str) -> None:
    """Refuse a DATABASE_URL we cannot use, in one sentence, before migrations fail on it."""
    import psycopg

    shown = redacted_url(url)
    if not url.startswith(("postgres://", "postgresql://")):
        raise ConfigurationError(
            f"DATABASE_URL={shown} is not a PostgreSQL URL; use postgresql://user:password@host/db "
            "or unset DATABASE_URL to use the embedded database."
        )
    try:
        found = database_versions(url.replace("postgres://", "postgresql://", 1))
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ConfigurationError(
            f"DATABASE_URL={shown} cannot be reached ({reason}); check host, port and "
            "credentials, or unset DATABASE_URL to use the embedded database."
        ) from exc
    problem = server_problem(found)
    if problem:
        raise ConfigurationError(f"DATABASE_URL={shown} {problem}")


def server_problem(found: DatabaseVersions) -> str | None:
    """What the server lacks, as the end of a sentence that starts with its URL; or None."""
    if found.server_num < POSTGRESQL_MINIMUM * 10000:
        return (f"points at PostgreSQL {found.server} and Echo Memory needs PostgreSQL "
                f"{POSTGRESQL_MINIMUM} or newer; upgrade that server or unset DATABASE_URL to "
                "use the embedded database.")
    if found.vector_available is None:
        return (f"points at PostgreSQL {found.server} without the pgvector extension, and Echo "
                f"Memory needs pgvector {PGVECTOR_MINIMUM} or newer; install pgvector on that "
                "server (https://github.com/pgvector/pgvector#installation) or unset "
                "DATABASE_URL to use the embedded database, which includes it.")
    if not found.trgm:
        return (f"points at PostgreSQL {found.server} without the pg_trgm extension; install "
                "the server's contrib package or unset DATABASE_URL.")
    return pgvector_version_problem(found.vector_available, found.vector_installed)


@dataclass(frozen=True)
class DatabaseVersions:
    server: str                   # e.g. "15.20"
    server_num: int               # server_version_num, e.g. 150020
    vector_available: str | None  # the version CREATE EXTENSION would install; None: absent
    vector_installed: str | None  # the version installed in this database, if any
    trgm: bool


def database_versions(url: str) -> DatabaseVersions:
    """What the server at `url` runs and offers, read from the catalog (no superuser needed)."""
    import psycopg

    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT current_setting('server_version_num')::int, "
            "max(default_version) FILTER (WHERE name = 'vector'), "
            "max(installed_version) FILTER (WHERE name = 'vector'), "
            "count(*) FILTER (WHERE name = 'pg_trgm') > 0 "
            "FROM pg_available_extensions WHERE name IN ('vector', 'pg_trgm')"
        ).fetchone()
    number, available, installed, trgm = row
    # From PostgreSQL 10 on a version is major.minor, before it major.major.minor.
    server = (f"{number // 10000}.{number % 10000}" if number >= 100000
              else f"{number // 10000}.{number // 100 % 100}.{number % 100}")
    return DatabaseVersions(server=server, server_num=number,
                            vector_available=available, vector_installed=installed, trgm=trgm)


# Django 5.2 supports PostgreSQL 14 and newer.
POSTGRESQL_MINIMUM = 14
# halfvec (0.7) stores fact vectors; iterative index scans (0.8) keep filtered vector
# searches from coming back short.
PGVECTOR_MINIMUM = "0.8.0"


def pgvector_version_problem(available: str | None, installed: str | None) -> str | None:
    """What is wrong with the server's pgvector versions, as the end of a sentence; or None."""
    wanted = PGVECTOR_MINIMUM
    if installed and _older(installed):
        if available and not _older(available):
            return (f"has pgvector {installed} installed in the database and Echo Memory needs "
                    f"{wanted} or newer; run ALTER EXTENSION vector UPDATE in that database.")
        return (f"has pgvector {installed} and Echo Memory needs {wanted} or newer; upgrade "
                "pgvector on that server, then run ALTER EXTENSION vector UPDATE.")
    if not installed and available and _older(available):
        return (f"offers pgvector {available} and Echo Memory needs {wanted} or newer; "
                "upgrade pgvector on that server or unset DATABASE_URL.")
    return None


def _older(version: str) -> bool:
    """Older than PGVECTOR_MINIMUM; a version string that does not parse is given the benefit."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) < Version(PGVECTOR_MINIMUM)
    except InvalidVersion:
        return False


def redacted_url(url: str) -> str:
    """The URL with its password replaced, so errors can be pasted into a ticket."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts)
