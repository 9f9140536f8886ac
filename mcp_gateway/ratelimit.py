"""Requests per rolling minute per identity: one interface, a Redis and a Postgres implementation.

Both keep the timestamp of every counted request inside the window (a sliding log,
not fixed buckets), so "240 a minute" means any 60 seconds, and the wait they
report is exact: until enough counted requests leave the window. A hit may cost
several requests at once (each message of a JSON-RPC batch counts): it is counted
whole or refused whole. Time comes from `clock()` (milliseconds), which tests
replace instead of sleeping.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.db import connection

from mcp_gateway.models import RateLimitHit


def clock() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    retry_after: int  # whole seconds until a request would be allowed; 0 when allowed


class RateLimiter(Protocol):
    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int,
            cost: int = 1) -> Decision: ...


def _retry_after(freeing_ms: int, window_ms: int, now_ms: int) -> int:
    """Seconds until the request counted at `freeing_ms` leaves the window."""
    return max(1, math.ceil((freeing_ms + window_ms - now_ms) / 1000))


# KEYS[1] = the identity's sorted set; ARGV = now_ms, window_ms, limit, cost, member prefix.
# One script, so the trim, the count and the adds are one atomic step on the server. When
# the hit does not fit, it returns the time of the counted request whose expiry makes room.
_SLIDING_LOG = """
local key, now, window = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local limit, cost = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count + cost <= limit then
  for i = 1, cost do
    redis.call('ZADD', key, now, ARGV[5] .. ':' .. i)
  end
  redis.call('PEXPIRE', key, window)
  return {1, count + cost, 0}
end
local freeing = redis.call('ZRANGE', key, count + cost - limit - 1, count + cost - limit - 1,
                           'WITHSCORES')
return {0, count, tonumber(freeing[2])}
"""


class RedisRateLimiter:
    def __init__(self, url: str, prefix: str):
        import redis

        self.client = redis.Redis.from_url(url)
        self.prefix = prefix
        self.script = self.client.register_script(_SLIDING_LOG)

    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int,
            cost: int = 1) -> Decision:
        member = f"{now_ms}:{secrets.token_hex(6)}"  # unique, so equal timestamps all count
        allowed, count, freeing = self.script(keys=[self.prefix + identity],
                                              args=[now_ms, window_ms, limit, cost, member])
        if allowed:
            return Decision(True, limit, max(0, limit - int(count)), 0)
        return Decision(False, limit, 0, _retry_after(int(freeing), window_ms, now_ms))


class DatabaseRateLimiter:
    """The same sliding log as rows; an advisory lock per identity makes check-and-add atomic.

    One round trip: the lock and the statement go as one query string, which Postgres runs
    as one implicit transaction (the lock is held to its end), and the statement's snapshot
    is taken after the lock, so it sees every earlier request of this identity. (Inside a
    caller's transaction the lock is held to that one's end instead, as before.)
    """

    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int,
            cost: int = 1) -> Decision:
        lock = int.from_bytes(hashlib.blake2b(f"ratelimit\x1f{identity}".encode(),
                                              digest_size=8).digest(), "big", signed=True)
        with connection.cursor() as cursor:
            # Expire, count and (if there is room) add in one statement. `freeing` is the
            # counted request whose expiry would make room for this hit. The table is
            # UNLOGGED (an ephemeral counter): its writes make no WAL for a commit to flush.
            # Each value is passed once (`hit`), as times in milliseconds: quoting the
            # parameters is most of this statement's cost in Python.
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s); "
                "WITH hit AS (SELECT %s::varchar AS identity, "
                "to_timestamp(%s / 1000.0) AS now, to_timestamp(%s / 1000.0) AS start, "
                "%s::int AS cost, %s::int AS lim), "
                "expired AS (DELETE FROM mcp_gateway_ratelimithit h USING hit "
                "WHERE h.identity = hit.identity AND h.at <= hit.start), "
                "live AS (SELECT count(*) AS hits FROM mcp_gateway_ratelimithit h, hit "
                "WHERE h.identity = hit.identity AND h.at > hit.start), "
                "added AS (INSERT INTO mcp_gateway_ratelimithit (identity, at) "
                "SELECT hit.identity, hit.now FROM hit, live, generate_series(1, hit.cost) "
                "WHERE live.hits + hit.cost <= hit.lim) "
                "SELECT live.hits, (SELECT extract(epoch FROM h.at) * 1000 "
                "FROM mcp_gateway_ratelimithit h WHERE h.identity = hit.identity "
                "AND h.at > hit.start ORDER BY h.at "
                "OFFSET GREATEST(live.hits + hit.cost - hit.lim - 1, 0) LIMIT 1) FROM live, hit",
                [lock, identity, now_ms, now_ms - window_ms, cost, limit],
            )
            cursor.nextset()  # past the lock's (empty) result, to the statement's
            hits, freeing = cursor.fetchone()
        if hits + cost <= limit:
            return Decision(True, limit, limit - hits - cost, 0)
        freeing_ms = int(freeing) if freeing is not None else now_ms
        return Decision(False, limit, 0, _retry_after(freeing_ms, window_ms, now_ms))


def hits_expire(*, now_ms: int | None = None) -> int:
    """Delete the database limiter's counted requests that have left the window; returns
    how many. The limiter trims an identity only when it asks again."""
    now_ms = clock() if now_ms is None else now_ms
    start = datetime.fromtimestamp(
        (now_ms - settings.RATE_LIMIT_WINDOW_SECONDS * 1000) / 1000, tz=UTC)
    return RateLimitHit.objects.filter(at__lte=start).delete()[0]


@lru_cache(maxsize=4)
def _limiter(backend: str, url: str, prefix: str) -> RateLimiter:
    if backend == "redis":
        return RedisRateLimiter(url, prefix)
    return DatabaseRateLimiter()


def limiter() -> RateLimiter:
    return _limiter(settings.RATE_LIMIT_BACKEND, settings.REDIS_URL,
                    settings.RATE_LIMIT_REDIS_PREFIX)


def count_request(identity: str, *, limit: int, cost: int = 1) -> Decision:
    """Count `cost` requests of a key's `identity` against `limit` a minute, or none."""
    if cost > limit:  # could never fit, however long the caller waits
        return Decision(False, limit, 0, settings.RATE_LIMIT_WINDOW_SECONDS)
    return limiter().hit(identity, limit=limit,
                         window_ms=settings.RATE_LIMIT_WINDOW_SECONDS * 1000, now_ms=clock(),
                         cost=cost)


def count_unauthenticated(address: str) -> Decision:
    """Count one request without a usable key from a client address (its own window)."""
    return limiter().hit(f"address:{address}",
                         limit=settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
                         window_ms=settings.RATE_LIMIT_WINDOW_SECONDS * 1000, now_ms=clock())
