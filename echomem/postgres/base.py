"""Django's PostgreSQL backend, with a health check for a reused connection that costs no
round trip while the server keeps the connection.

With CONN_HEALTH_CHECKS, Django sends `SELECT 1` before the first query of each request
on a persistent connection, to replace one the server has dropped (a restart, an idle
timeout, pg_terminate_backend). A connection the server closed has its farewell or end
of file waiting on the socket; a zero-timeout poll of an idle connection sees that, and
only then is Django's full check made. (A server that vanished without a word is not
found by `SELECT 1` either, short of a TCP timeout.)
"""

from __future__ import annotations

import select

import psycopg
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self) -> None:
        if (self.connection is not None and self.health_check_enabled
                and not self.health_check_done and not self.pool
                and _nothing_waiting(self.connection)):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()


def _nothing_waiting(connection: psycopg.Connection) -> bool:
    """True when the idle connection's socket has nothing to read: the server has not
    closed it or written to it since the last reply."""
    try:
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN)
        return not poller.poll(0)
    except (OSError, ValueError, psycopg.Error):
        return False
