"""The production shape on one machine: separate `echo-memory serve` and `echo-memory worker`
processes sharing one PostgreSQL (reached as DATABASE_URL, like an external server) and Redis.

The database is a fresh one on the test session's embedded PostgreSQL (its Unix socket is
reachable by any process here), migrated by `echo-memory migrate` as a deploy would. Each
fleet gets its own Celery queue and Redis key prefix, so two runs sharing one Redis database
never take each other's tasks.

    def test_something(fleet):
        web = fleet.web()                      # an `echo-memory serve` on a free port, healthy
        worker = fleet.worker()                # an `echo-memory worker`, ready for tasks
        key = fleet.key                        # an API key of the fleet's one account
        with fleet.sql() as db: ...            # psycopg, straight to the fleet's database
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
import pytest
import redis

from tests.cli.conftest import Server, cli_env, run_cli, servers  # noqa: F401 (a fixture)
from tests.harness import free_port

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")
# Celery's own line once a worker consumes (`celery@host ready.`).
WORKER_READY = re.compile(r"celery@\S+ ready\.")


def _admin_url() -> str:
    from echomem.runtime import EMBEDDED_URL_VARIABLE

    # tests/settings.py started the session's server and exported its URL (database echomem).
    url = os.environ[EMBEDDED_URL_VARIABLE]
    return url.replace("/echomem?", "/postgres?", 1)


@pytest.fixture(scope="session")
def fleet_database(tmp_path_factory) -> Iterator[str]:
    """A migrated database for the fleet's processes, as a DATABASE_URL; dropped at the end."""
    name = f"fleet_{secrets.token_hex(4)}"
    admin = _admin_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = admin.replace("/postgres?", f"/{name}?", 1)
    try:
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


@pytest.fixture(scope="session")
def fleet_setup(fleet_database, tmp_path_factory) -> Iterator[dict[str, Any]]:
    """Migrate the fleet's database and create its account and key, once per session."""
    home = tmp_path_factory.mktemp("fleet-home")
    env = _base_env(home, fleet_database, queue=f"fleet-{secrets.token_hex(4)}")
    migrated = run_cli("migrate", env=env, timeout=300)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    made = run_cli("quickstart", "--no-serve", "--user", "fleet-owner", env=env, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    yield {"env": env, "key": KEY.search(made.stdout)[1], "home": home}
    # The queue and its bindings would otherwise stay in Redis after every run.
    broker = redis.Redis.from_url(env["REDIS_URL"])
    queue = env["ECHO_MEMORY_CELERY_QUEUE"]
    broker.delete(queue, *broker.keys(f"_kombu.binding*.{queue}"))


def _base_env(home: Path, database_url: str, *, queue: str) -> dict[str, str]:
    return cli_env(
        home,
        DATABASE_URL=database_url,
        SECRET_KEY="fleet-test-" + "k" * 64,
        REDIS_URL=os.environ["REDIS_URL"],
        ECHO_MEMORY_LOG_FORMAT="json",
        ECHO_MEMORY_INDEXING="celery",
        ECHO_MEMORY_CELERY_QUEUE=queue,
        # Rate-limit windows and caches of this fleet only (Redis outlives a run).
        ECHO_MEMORY_RATE_LIMIT_PREFIX=f"echo-{queue}:rl:",
        # The hosted shape (plans, metering), as in production.
        ECHO_MEMORY_SELF_HOSTED="0",
    )


class Fleet:
    """Starts the fleet's processes (stopped by the `servers` fixture at the end of the test)."""

    def __init__(self, setup: dict[str, Any], database_url: str, start, tmp: Path):
        self.env: dict[str, str] = dict(setup["env"])
        self.key: str = setup["key"]
        self.database_url = database_url
        self.queue = self.env["ECHO_MEMORY_CELERY_QUEUE"]
        self._start = start
        self._tmp = tmp
        self._count = 0

    def _log(self, kind: str) -> Path:
        self._count += 1
        return self._tmp / f"{kind}-{self._count}.log"

    def web(self, *, port: int | None = None, **env: str) -> Web:
        port = port or free_port()
        server = self._start(["serve", "--port", str(port)], self.env | env, self._log("web"))
        server.wait_healthy(port)
        return Web(server, port)

    def worker(self, *, concurrency: int = 1, tracebacks_expected: bool = False,
               **env: str) -> Worker:
        server = self._start(["worker", "--concurrency", str(concurrency)], self.env | env,
                             self._log("worker"), tracebacks_expected=tracebacks_expected)
        worker = Worker(server)
        worker.wait_ready()
        return worker

    def beat(self, **env: str) -> Server:
        return self._start(["beat"], self.env | env, self._log("beat"))

    @contextlib.contextmanager
    def sql(self) -> Iterator[psycopg.Connection]:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            yield conn

    def tools(self, web: Web) -> httpx.Client:
        """The REST mirror of the tools on one web process, with the fleet's key."""
        return httpx.Client(base_url=f"{web.url}/api/v1/tools", timeout=60,
                            headers={"Authorization": f"Bearer {self.key}"})


class Web:
    def __init__(self, server: Server, port: int):
        self.server = server
        self.port = port
        self.url = f"http://127.0.0.1:{port}"


class Worker:
    def __init__(self, server: Server):
        self.server = server

    @property
    def pid(self) -> int:
        return self.server.process.pid

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not WORKER_READY.search(self.server.output()):
            if self.server.process.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.server.output()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"worker not ready after {timeout}s:\n"
                                     f"{self.server.output()}")
            time.sleep(0.3)

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes, the main process first (so it cannot
        requeue anything on its children's behalf): what an OOM kill or a lost machine does."""
        main = psutil.Process(self.pid)
        children = main.children(recursive=True)
        main.kill()
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
        psutil.wait_procs([main, *children], timeout=30)
        self.server.process.wait()

    def lines(self) -> list[dict[str, Any]]:
        """Its JSON log lines (anything else it printed is left out)."""
        found = []
        for line in self.server.output().splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    found.append(json.loads(line))
        return found


@pytest.fixture
def fleet(fleet_setup, fleet_database, servers, tmp_path) -> Fleet:  # noqa: F811
    return Fleet(fleet_setup, fleet_database, servers, tmp_path)
