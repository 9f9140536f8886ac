"""Misconfiguration fails at start with one sentence naming the variable and the fix."""

from __future__ import annotations

import socket

import pytest

from tests.cli.conftest import cli_env, run_cli
from tests.harness import PostgresWithoutPgvector, free_port


def assert_one_clear_sentence(result, *needles: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    message = result.stderr.strip()
    assert "Traceback" not in result.stderr + result.stdout
    assert len(message.splitlines()) == 1, message
    assert message.startswith("echo-memory: ")
    for needle in needles:
        assert needle in message, (needle, message)
    return message


@pytest.mark.parametrize("command", [["quickstart", "--no-serve"], ["serve"], ["migrate"]])
def test_home_inside_a_file_is_refused(tmp_path, command):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run_cli(*command, env=cli_env(blocker / "home"))
    assert_one_clear_sentence(result, f"ECHO_MEMORY_HOME={blocker / 'home'}",
                              "not a writable directory", "set ECHO_MEMORY_HOME to a directory")


def test_home_on_a_read_only_filesystem_is_refused(tmp_path):
    result = run_cli("quickstart", "--no-serve", env=cli_env("/proc/echo-memory"))
    assert_one_clear_sentence(result, "ECHO_MEMORY_HOME=/proc/echo-memory", "set ECHO_MEMORY_HOME")


def test_occupied_port_is_refused_before_anything_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        home = tmp_path / "home"
        for command in (["serve"], ["quickstart"]):
            result = run_cli(*command, "--port", str(port), env=cli_env(home))
            assert_one_clear_sentence(result, f"port {port} on 127.0.0.1 is already in use",
                                      "--port", "ECHO_MEMORY_PORT")
        assert not (home / "pgdata").exists()


def test_occupied_port_from_the_environment_variable_is_named_too(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", env=cli_env(tmp_path / "home", ECHO_MEMORY_PORT=str(port)))
        assert_one_clear_sentence(result, f"port {port}", "ECHO_MEMORY_PORT")


@pytest.fixture(scope="module")
def postgres_without_pgvector():
    server = PostgresWithoutPgvector()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["migrate"],
                                     ["quickstart", "--no-serve"]])
def test_database_url_without_pgvector_is_refused(tmp_path, postgres_without_pgvector, command):
    env = cli_env(tmp_path / "home", DATABASE_URL=postgres_without_pgvector)
    if command[0] == "serve":
        command = ["serve", "--port", str(free_port())]
    result = run_cli(*command, env=env)
    assert_one_clear_sentence(result, "DATABASE_URL=", "without the pgvector extension",
                              "install pgvector", "unset DATABASE_URL")


@pytest.mark.parametrize(("available", "installed", "says"), [
    ("0.6.2", None, ["offers pgvector 0.6.2", "0.8.0 or newer", "upgrade pgvector"]),
    ("0.8.1", "0.7.4", ["pgvector 0.7.4 installed", "ALTER EXTENSION vector UPDATE"]),
    ("0.7.0", "0.7.0", ["has pgvector 0.7.0", "upgrade pgvector on that server",
                        "ALTER EXTENSION vector UPDATE"]),
])
def test_a_pgvector_too_old_for_halfvec_and_iterative_scans_is_named(available, installed,
                                                                      says):
    from echomem.runtime import pgvector_version_problem

    problem = pgvector_version_problem(available, installed)
    assert problem and all(part in problem for part in says), problem


@pytest.mark.parametrize(("available", "installed"), [
    ("0.8.0", None), ("0.8.1", "0.8.0"), ("1.0", None), ("0.10.0", "0.9.1")])
def test_a_recent_pgvector_passes(available, installed):
    from echomem.runtime import pgvector_version_problem

    assert pgvector_version_problem(available, installed) is None


def test_unreachable_database_url_is_refused_with_its_password_hidden(tmp_path):
    port = free_port()
    url = f"postgresql://app:hunter2@127.0.0.1:{port}/echo"
    result = run_cli("migrate", env=cli_env(tmp_path / "home", DATABASE_URL=url))
    message = assert_one_clear_sentence(result, "cannot be reached", "unset DATABASE_URL")
    assert "hunter2" not in message and "app:***@" in message


def test_non_postgres_database_url_is_refused(tmp_path):
    result = run_cli("migrate", env=cli_env(tmp_path / "home",
                                            DATABASE_URL="mysql://root@localhost/echo"))
    assert_one_clear_sentence(result, "is not a PostgreSQL URL", "postgresql://")


def test_worker_without_a_broker_says_what_to_set(tmp_path):
    result = run_cli("worker", env=cli_env(tmp_path / "home"))
    assert_one_clear_sentence(result, "REDIS_URL", "needs no worker")


def test_beat_without_a_broker_says_what_to_set(tmp_path):
    result = run_cli("beat", env=cli_env(tmp_path / "home"))
    assert_one_clear_sentence(result, "the beat needs a broker", "REDIS_URL")
