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


@contextmanager
def timeouts_refused() -> Iterator[None]:
    """Turn the database cancelling a statement at our limits into a clear Timeout.

    Anything else the database raises is a fault and goes on as it is.
    """
    from django.conf import settings
    from django.db import OperationalError

    from echomem.errors import Timeout

    try:
        yield
    except OperationalError as exc:
        state = getattr(exc.__cause__, "sqlstate", None)
        if state == QUERY_CANCELED:
            raise Timeout(
                "the request ran longer than this server allows one database statement "
                f"({settings.STATEMENT_TIMEOUT_MS} ms) and was cancelled; nothing it would "
                "have written was kept", field="arguments",
                fix="ask for less at once (a smaller top_k, fewer facts per write_episode), "
                    "or send it again when the server is less busy") from exc
        if state == LOCK_NOT_AVAILABLE:
            raise Timeout(
                f"the request waited longer than {settings.LOCK_TIMEOUT_MS} ms for another "
                "request writing the same facts and was cancelled; nothing it would have "
                "written was kept", field="arguments",
                fix="send it again once the other write has finished") from exc
        raise
