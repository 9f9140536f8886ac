"""Limits below the service: statement and lock timeouts are clear refusals, and a fault
injected under the service (the database connection dropped) is still a fault, answered
-32603 / 500 without inviting a retry, and logged."""

from __future__ import annotations

import json
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection

from memories.models import Fact
from memories.search import candidates
from tests.mcp.test_hostile_arguments import episode

pytestmark = pytest.mark.django_db(transaction=True)


def other_connection() -> psycopg.Connection:
    """A second session on the test database, outside Django."""
    params = connection.get_connection_params()
    return psycopg.connect(**{k: v for k, v in params.items()
                              if k in {"dbname", "host", "port", "user", "password"}})


@contextmanager
def table_locked_elsewhere(table: str):
    """Another session holds the table exclusively until the block ends."""
    with other_connection() as other:
        other.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        yield
        other.rollback()


@contextmanager
def limits(statement_ms: int, lock_ms: int):
    """The request limits of this worker's connection, lowered for the test."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET statement_timeout = {statement_ms}; SET lock_timeout = {lock_ms}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout; RESET lock_timeout")


def test_the_request_limits_are_set_on_every_connection(settings):
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        statement = cursor.fetchone()[0]
        cursor.execute("SHOW lock_timeout")
        lock = cursor.fetchone()[0]
    assert statement == f"{settings.STATEMENT_TIMEOUT_MS // 1000}s"
    assert lock == f"{settings.LOCK_TIMEOUT_MS // 1000}s"


def test_a_query_over_the_statement_timeout_is_a_clear_error_at_both_doors(
        mcp_for, client, alice):
    session = mcp_for(alice)
    assert not session.call("write_episode", episode())["result"]["isError"]
    query = {"scope": "shared", "query": "Ada works at Acme"}
    with table_locked_elsewhere("memories_fact"), limits(statement_ms=300, lock_ms=0):
        result = session.call("query_memory", query)["result"]
        over_rest = client.post("/api/v1/tools/query_memory", data=json.dumps(query),
                                content_type="application/json",
                                headers={"Authorization": f"Bearer {alice.plaintext}"})
    assert result["isError"] is True
    assert result["error"]["code"] == "timeout"
    assert "300 ms" not in result["error"]["message"]  # says the configured limit
    assert "cancelled" in result["error"]["message"]
    assert over_rest.status_code == 503
    assert over_rest.json()["error"]["code"] == "timeout"
    assert over_rest["Retry-After"]
    assert session.call("query_memory", query)["result"]["count"] == 1


def test_a_write_waiting_past_the_lock_timeout_is_refused_and_stores_nothing(mcp_for, alice):
    session = mcp_for(alice)
    with table_locked_elsewhere("memories_fact"), limits(statement_ms=0, lock_ms=300):
        result = session.call("write_episode", episode())["result"]
    assert result["isError"] is True
    assert result["error"]["code"] == "timeout"
    assert "nothing it would have written was kept" in result["error"]["message"]
    assert Fact.objects.count() == 0
    assert session.call("write_episode", episode())["result"]["stored"] is True


def _drop_connection_during(monkeypatch, module, name: str) -> None:
    """Terminate this worker's database connection when `module.name` runs, then go on."""
    original = getattr(module, name)

    def dropped(*args, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        with other_connection() as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, dropped)


@pytest.mark.injects_server_fault
def test_a_dropped_database_connection_is_a_fault_at_both_doors_not_a_refusal(
        mcp_for, client, alice, monkeypatch, no_server_tracebacks):
    session = mcp_for(alice)
    assert not session.call("write_episode", episode())["result"]["isError"]
    query = {"scope": "shared", "query": "Ada"}
    try:
        _drop_connection_during(monkeypatch, candidates, "text_candidates")
        over_mcp = session.request("tools/call", {"name": "query_memory", "arguments": query})
        connection.close()
        over_rest = client.post("/api/v1/tools/query_memory", data=json.dumps(query),
                                content_type="application/json",
                                headers={"Authorization": f"Bearer {alice.plaintext}"})
    finally:
        connection.close()
    error = over_mcp.json()["error"]
    assert over_mcp.status_code == 200
    assert error["code"] == -32603
    assert over_rest.status_code == 500
    assert over_rest["Content-Type"] == "application/json"
    rest_error = over_rest.json()["error"]
    assert rest_error["code"] == "internal_error"
    for message in (error["message"], rest_error["message"]):
        assert "try again" not in message and "retry" not in message
        assert "not in the request" in message
    assert error["data"]["reference"] in error["message"]
    logged = [record.getMessage() for record in no_server_tracebacks.records]
    assert any(error["data"]["reference"] in line for line in logged)
    assert any(rest_error["reference"] in line for line in logged)
