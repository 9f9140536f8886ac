"""Requests per rolling minute per key: one interface, a Redis and a Postgres implementation.

Both keep the timestamp of every counted request inside the window (a sliding log,
not fixed buckets), so "240 a minute" means any 60 seconds, and the wait they
report is exact: until the oldest counted request leaves the window. Time comes
from `clock()` (milliseconds), which tests replace instead of sleeping.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.db import connection, transaction


def clock() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    retry_after: int  # whole seconds until a request would be allowed; 0 when allowed


class RateLimiter(Protocol):
    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int) -> Decision: ...


def _retry_after(oldest_ms: int, window_ms: int, now_ms: int) -> int:
    return max(1, math.ceil((oldest_ms + window_ms - now_ms) / 1000))


# KEYS[1] = the identity's sorted set; ARGV = now_ms, window_ms, limit, member.
# One script, so the trim, the count and the add are one atomic step on the server.
_SLIDING_LOG = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  return {1, count + 1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, count, tonumber(oldest[2])}
"""


class RedisRateLimiter:
    def __init__(self, url: str, prefix: str):
        import redis

        self.client = redis.Redis.from_url(url)
        self.prefix = prefix
        self.script = self.client.register_script(_SLIDING_LOG)

    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int) -> Decision:
        member = f"{now_ms}:{secrets.token_hex(6)}"  # unique, so equal timestamps all count
        allowed, count, oldest = self.script(keys=[self.prefix + identity],
                                             args=[now_ms, window_ms, limit, member])
        if allowed:
            return Decision(True, limit, max(0, limit - int(count)), 0)
        return Decision(False, limit, 0, _retry_after(int(oldest), window_ms, now_ms))


class DatabaseRateLimiter:
    """The same sliding log as rows; an advisory lock per identity makes check-and-add atomic."""

    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int) -> Decision:
        now = datetime.fromtimestamp(now_ms / 1000, tz=UTC)
        start = now - timedelta(milliseconds=window_ms)
        lock = int.from_bytes(hashlib.blake2b(f"ratelimit\x1f{identity}".encode(),
                                              digest_size=8).digest(), "big", signed=True)
        with transaction.atomic(), connection.cursor() as cursor:
            # An ephemeral counter (the table is UNLOGGED): the request need not wait for
            # a WAL flush on commit. One round trip for both settings.
            cursor.execute("SET LOCAL synchronous_commit = off; "
                           f"SELECT pg_advisory_xact_lock({lock})")
            # Expire, count and (if there is room) add in one statement; its snapshot is
            # taken after the lock, so it sees every earlier request of this identity.
            cursor.execute(
                "WITH expired AS (DELETE FROM mcp_gateway_ratelimithit "
                "WHERE identity = %s AND at <= %s), "
                "live AS (SELECT count(*) AS hits, min(at) AS oldest "
                "FROM mcp_gateway_ratelimithit WHERE identity = %s AND at > %s), "
                "added AS (INSERT INTO mcp_gateway_ratelimithit (identity, at) "
                "SELECT %s, %s FROM live WHERE live.hits < %s) "
                "SELECT hits, oldest FROM live",
                [identity, start, identity, start, identity, now, limit],
            )
            hits, oldest = cursor.fetchone()
        if hits < limit:
            return Decision(True, limit, limit - hits - 1, 0)
        oldest_ms = int(oldest.timestamp() * 1000)
        return Decision(False, limit, 0, _retry_after(oldest_ms, window_ms, now_ms))


@lru_cache(maxsize=4)
def _limiter(backend: str, url: str, prefix: str) -> RateLimiter:
    if backend == "redis":
        return RedisRateLimiter(url, prefix)
    return DatabaseRateLimiter()


def limiter() -> RateLimiter:
    return _limiter(settings.RATE_LIMIT_BACKEND, settings.REDIS_URL,
                    settings.RATE_LIMIT_REDIS_PREFIX)


def count_request(identity: str) -> Decision:
    """Count one request of `identity` against the configured limit; the one entry point."""
    return limiter().hit(identity, limit=settings.RATE_LIMIT_PER_MINUTE,
                         window_ms=settings.RATE_LIMIT_WINDOW_SECONDS * 1000, now_ms=clock())


def refusal_message(decision: Decision) -> str:
    return (f"rate limit reached: {decision.limit} requests a minute per key, every request "
            f"counted (initialize and notifications too); wait {decision.retry_after} seconds "
            "(the Retry-After header) and send again, and keep one session per worker rather "
            "than reconnecting for each call")
