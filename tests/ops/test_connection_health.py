"""A persistent database connection is checked at the start of each request
(echomem/postgres/base.py): by a look at its socket while the server keeps it, by a query
once the server has closed it, which is then replaced before the request uses it."""

from __future__ import annotations

import select
import time

import psycopg
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _new_request() -> None:
    """What Django does for a persistent connection when a request begins, then its
    first query's connection check."""
    connection.close_if_unusable_or_obsolete()
    connection.cursor().close()


def test_a_connection_the_server_keeps_is_reused_without_a_query(monkeypatch):
    # A fresh connection: one opened by an earlier test may be past CONN_MAX_AGE, and is
    # then replaced for that reason.
    connection.close()
    pid = _backend_pid()
    queried = []
    monkeypatch.setattr(connection, "is_usable", lambda: queried.append(True) or True)
    _new_request()
    assert queried == []
    assert connection.health_check_done
    assert _backend_pid() == pid


def test_a_connection_the_server_closed_is_replaced_before_the_request_uses_it():
    pid = _backend_pid()
    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items()
                            if k in {"dbname", "host", "port", "user", "password"}},
                         autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    # The server ends the backend asynchronously; its farewell then waits on the socket.
    poller = select.poll()
    poller.register(connection.connection.fileno(), select.POLLIN)
    deadline = time.monotonic() + 30
    while not poller.poll(100):
        assert time.monotonic() < deadline, "the terminated backend never closed its socket"
    _new_request()
    assert _backend_pid() != pid
