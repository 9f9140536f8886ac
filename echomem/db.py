"""Per-request database limits: every web request's statements and lock waits are bounded.

The limits are libpq startup options of every connection (settings.DATABASES), so they
cost no round trip. Commands that legitimately run long (migrations, bulk indexing,
repairs) lift them: a maintenance-only process with `maintenance_process()` before
Django starts, a server before it forks its workers with `without_request_timeouts()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

# SQLSTATEs Postgres uses when it cancels a statement on our limits.
QUERY_CANCELED = "57014"       # statement_timeout
LOCK_NOT_AVAILABLE = "55P03"   # lock_timeout


def startup_options(*, statement_timeout_ms: int, lock_timeout_ms: int) -> str:
    return f"-c statement_timeout={statement_timeout_ms} -c lock_timeout={lock_timeout_ms}"


@contextmanager
def without_request_timeouts() -> Iterator[None]:
    """Run a long maintenance job on this thread's connection without the request limits."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0; SET lock_timeout = 0")
    try:
        yield
    finally:
        # Back to the connection's startup values (the request limits).
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout; RESET lock_timeout")


def maintenance_process() -> None:
    """Call before Django reads its settings: this process never serves requests."""
    import os

    os.environ["ECHO_MEMORY_STATEMENT_TIMEOUT_MS"] = "0"
    os.environ["ECHO_MEMORY_LOCK_TIMEOUT_MS"] = "0"
