"""Prometheus metrics (prometheus_client), served at /metrics (echomem/views.py).

Counted as things happen: requests and their latency per door and status, tool calls and
their latency per tool and outcome, units, rate-limit refusals. Read from the database
at scrape time: the embedding backlog and its lag, the database's connections. No label
names an account or a key: a label's values must stay a short fixed list.

Several worker processes (`echo-memory serve --workers N`) each count their own; with
PROMETHEUS_MULTIPROC_DIR set (serve sets it, echomem/server.py) every process writes its
counts to files there and a scrape of any worker adds them all up. The variable must be
set before this module is first imported.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

logger = logging.getLogger(__name__)
CONTENT_TYPE = CONTENT_TYPE_LATEST
# Seconds: a cached read answers in a few milliseconds, a large write or a cold model in
# seconds; the statement timeout (15 s by default) bounds the top.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20)

HTTP_REQUESTS = Counter(
    "echo_memory_http_requests", "HTTP requests answered, by door (mcp, api, web, ops, "
    "static) and HTTP status code.", ["door", "status"])
HTTP_LATENCY = Histogram(
    "echo_memory_http_request_duration_seconds", "Time to answer an HTTP request, by door.",
    ["door"], buckets=LATENCY_BUCKETS)
TOOL_CALLS = Counter(
    "echo_memory_tool_calls", "Tool calls (MCP tools/call and REST alike), by tool and "
    "status: ok, the error code of a refusal the caller can fix (invalid_argument, "
    "not_found, allowance_exhausted, ...), or fault.", ["tool", "status"])
TOOL_LATENCY = Histogram(
    "echo_memory_tool_call_duration_seconds", "Time a tool call takes, validation included, "
    "by tool and status.", ["tool", "status"], buckets=LATENCY_BUCKETS)
UNITS = Counter(
    "echo_memory_units", "Units of work done (one per fact or note written or returned), by "
    "tool, counted when their transaction commits, billed or not (a self-hosted box bills "
    "none).", ["tool"])
RATE_LIMIT_REFUSALS = Counter(
    "echo_memory_rate_limit_refusals", "Requests refused with 429 by a rate limit: kind=key "
    "(a key's window), kind=address (requests without a usable key, per client address) or "
    "kind=web (the pages' limits: sign-in, sign-up, password reset, ...).", ["kind"])


def observe_request(door: str, status: int, seconds: float) -> None:
    HTTP_REQUESTS.labels(door, str(status)).inc()
    HTTP_LATENCY.labels(door).observe(seconds)


@contextmanager
def tool_call(tool: str) -> Iterator[None]:
    """Count and time one tool call; an EchoError is the caller's (its code is the status),
    anything else a fault."""
    from echomem.errors import EchoError

    started = time.perf_counter()
    status = "fault"
    try:
        yield
        status = "ok"
    except EchoError as exc:
        status = exc.code
        raise
    finally:
        TOOL_CALLS.labels(tool, status).inc()
        TOOL_LATENCY.labels(tool, status).observe(time.perf_counter() - started)


def units_committed(tool: str, units: int) -> None:
    UNITS.labels(tool).inc(units)


def rate_limit_refused(kind: str) -> None:
    RATE_LIMIT_REFUSALS.labels(kind).inc()


class _ThisProcess:
    """The default registry's metrics (ours and the process's), when one process serves."""

    def collect(self):
        yield from REGISTRY.collect()


class DatabaseCollector:
    """Gauges read from the database at each scrape: a few index-backed queries."""

    def collect(self):
        from django.db import connection

        up = GaugeMetricFamily("echo_memory_database_up",
                               "1 when the scrape could read the database, else 0.")
        try:
            with connection.cursor() as cursor:
                families = [*_backlog(cursor), *_connections(cursor)]
        except Exception as exc:  # a scrape reports the outage; /readyz says what failed
            logger.warning("metrics could not read the database: %s: %s",
                           type(exc).__name__, str(exc)[:300])
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families


def _backlog(cursor) -> list[GaugeMetricFamily]:
    backlog = GaugeMetricFamily(
        "echo_memory_embedding_backlog", "Facts and notes written but not yet embedded "
        "(found by words, not yet by meaning).", labels=["kind"])
    lag = GaugeMetricFamily(
        "echo_memory_embedding_lag_seconds", "Age of the oldest fact or note still waiting "
        "to be embedded; 0 when none waits.", labels=["kind"])
    # Both use the partial indexes on the rows still waiting (memories/models.py).
    cursor.execute(
        "SELECT 'fact', count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0) "
        "FROM memories_fact WHERE embedding IS NULL "
        "UNION ALL "
        "SELECT 'note', count(*), coalesce(extract(epoch FROM now() - min(updated_at)), 0) "
        "FROM memories_note WHERE embedding IS NULL")
    for kind, count, seconds in cursor.fetchall():
        backlog.add_metric([kind], count)
        lag.add_metric([kind], max(0.0, float(seconds)))
    return [backlog, lag]


def _connections(cursor) -> list[GaugeMetricFamily]:
    """The server's connection budget, as the database sees it: every process's pool
    (each web thread keeps one for DATABASE_CONN_MAX_AGE seconds) shows up here."""
    connections = GaugeMetricFamily(
        "echo_memory_database_connections", "Connections to this database, by state "
        "(active, idle, idle in transaction, ...; unknown where the role may not see it).",
        labels=["state"])
    limit = GaugeMetricFamily("echo_memory_database_max_connections",
                              "The server's max_connections.")
    cursor.execute(
        "SELECT coalesce(state, 'unknown'), count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() GROUP BY 1 ORDER BY 1")
    for state, count in cursor.fetchall():
        connections.add_metric([state], count)
    cursor.execute("SELECT current_setting('max_connections')::int")
    limit.add_metric([], cursor.fetchone()[0])
    return [connections, limit]


def scrape() -> bytes:
    """The exposition text: this process's (or, in multiprocess mode, every process's)
    counts and the database gauges."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(DatabaseCollector())
    return generate_latest(registry)
