"""Requests per rolling window per identity: one interface, a Redis and a Postgres implementation.

Every limit of the server counts here: each key's requests at both doors (/mcp and
/api/v1), requests without a usable key per client address (echomem/admission.py), and
the web's sign-in, sign-up, password-reset and other per-person limits (web/limits.py).
Both implementations keep the timestamp of every counted request inside the window (a
sliding log, not fixed buckets), so "240 a minute" means any 60 seconds, and a burst
that straddles a minute boundary gets no more than the limit; the wait they report is
exact: until enough counted requests leave the window. A hit may cost several requests
at once (each message of a JSON-RPC batch counts): it is counted whole or refused
whole. Time comes from `clock()` (milliseconds), which tests replace instead of
sleeping.

Each hit answers with the truth of its window in the same round trip (the script or the
statement that counts): what is left, and when the oldest counted request leaves, which
the doors send on every reply (echomem/ratelimit_headers.py). `usage` reads windows
without counting (the keys page), in one round trip for a page of identities.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.db import connection

from echomem.errors import ConfigurationError

# The database limiter's rows. The table is declared by mcp_gateway.models.RateLimitHit,
# where its migrations live; this module, below every door, only reads and writes it.
TABLE = "mcp_gateway_ratelimithit"


def clock() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int  # requests the window still takes (after this hit, if it was counted)
    retry_after: int  # whole seconds until this hit would fit; 0 when allowed
    # Whole seconds until the oldest counted request leaves the window, when `remaining`
    # next grows (a sliding log has no moment when the whole window empties); 0: none counted.
    reset: int
    window: int  # seconds


@dataclass(frozen=True)
class Usage:
    """A window read without counting: `used` of `limit`, `reset` as in Decision."""
    used: int
    limit: int
    reset: int
    window: int  # seconds

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)


# Counted requests inside a window, and the time of the oldest (ms; None when there is none).
Counted = tuple[int, int | None]


class RateLimiter(Protocol):
    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int,
            cost: int = 1) -> Decision: ...

    def peek(self, identities: list[str], *, window_ms: int, now_ms: int
             ) -> dict[str, Counted]: ...


def _retry_after(freeing_ms: int, window_ms: int, now_ms: int) -> int:
    """Seconds until the request counted at `freeing_ms` leaves the window."""
    return max(1, math.ceil((freeing_ms + window_ms - now_ms) / 1000))


def _reset(oldest_ms: int | None, window_ms: int, now_ms: int) -> int:
    return 0 if oldest_ms is None else _retry_after(oldest_ms, window_ms, now_ms)


# KEYS[1] = the identity's sorted set; ARGV = now_ms, window_ms, limit, cost, member prefix.
# One script, so the trim, the count and the adds are one atomic step on the server. It
# returns whether the hit fits, the count, the time of the counted request whose expiry
# makes room (when it does not fit) and the time of the oldest counted request.
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
  return {1, count + cost, 0, redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]}
end
local freeing = redis.call('ZRANGE', key, count + cost - limit - 1, count + cost - limit - 1,
                           'WITHSCORES')
return {0, count, tonumber(freeing[2]), redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]}
"""


class RedisRateLimiter:
    """Each identity's log is a sorted set under RATE_LIMIT_REDIS_PREFIX, read at each hit
    (a test run gives each test its own prefix without a new connection pool)."""

    def __init__(self, url: str):
        import redis

        self.client = redis.Redis.from_url(url)
        self.script = self.client.register_script(_SLIDING_LOG)

    def hit(self, identity: str, *, limit: int, window_ms: int, now_ms: int,
            cost: int = 1) -> Decision:
        member = f"{now_ms}:{secrets.token_hex(6)}"  # unique, so equal timestamps all count
        allowed, count, freeing, *oldest = self.script(
            keys=[settings.RATE_LIMIT_REDIS_PREFIX + identity],
            args=[now_ms, window_ms, limit, cost, member])
        # A score comes back as its text. An empty log would end the reply early (a Lua nil
        # ends a table); it cannot be empty here: the hit was just added, or the log is full.
        reset = _reset(int(float(oldest[0])) if oldest and oldest[0] else None, window_ms, now_ms)
        remaining = max(0, limit - int(count))
        if allowed:
            return Decision(True, limit, remaining, 0, reset, window_ms // 1000)
        return Decision(False, limit, remaining, _retry_after(int(freeing), window_ms, now_ms),
                        reset, window_ms // 1000)

    def peek(self, identities: list[str], *, window_ms: int, now_ms: int
             ) -> dict[str, Counted]:
        """One pipeline (one round trip): each log's count and oldest time inside the window.
        Reads only: an expired entry is left for the identity's next hit to trim."""
        start = f"({now_ms - window_ms}"  # exclusive, as the script's trim keeps `> start`
        pipe = self.client.pipeline(transaction=False)
        for identity in identities:
            key = settings.RATE_LIMIT_REDIS_PREFIX + identity
            pipe.zcount(key, start, "+inf")
            pipe.zrangebyscore(key, start, "+inf", start=0, num=1, withscores=True)
        replies = pipe.execute()
        return {identity: (int(count), int(first[0][1]) if first else None)
                for identity, count, first in zip(identities, replies[::2], replies[1::2],
                                                  strict=True)}


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
                f"expired AS (DELETE FROM {TABLE} h USING hit "
                "WHERE h.identity = hit.identity AND h.at <= hit.start), "
                f"live AS (SELECT count(*) AS hits, min(h.at) AS oldest FROM {TABLE} h, hit "
                "WHERE h.identity = hit.identity AND h.at > hit.start), "
                f"added AS (INSERT INTO {TABLE} (identity, at) "
                "SELECT hit.identity, hit.now FROM hit, live, generate_series(1, hit.cost) "
                "WHERE live.hits + hit.cost <= hit.lim) "
                "SELECT live.hits, (SELECT extract(epoch FROM h.at) * 1000 "
                f"FROM {TABLE} h WHERE h.identity = hit.identity "
                "AND h.at > hit.start ORDER BY h.at "
                "OFFSET GREATEST(live.hits + hit.cost - hit.lim - 1, 0) LIMIT 1), "
                "extract(epoch FROM live.oldest) * 1000 FROM live, hit",
                [lock, identity, now_ms, now_ms - window_ms, cost, limit],
            )
            cursor.nextset()  # past the lock's (empty) result, to the statement's
            hits, freeing, oldest = cursor.fetchone()
        window = window_ms // 1000
        if hits + cost <= limit:
            # The oldest counted before this hit, or this hit itself when it is the first.
            reset = _reset(int(oldest) if oldest is not None else now_ms, window_ms, now_ms)
            return Decision(True, limit, limit - hits - cost, 0, reset, window)
        freeing_ms = int(freeing) if freeing is not None else now_ms
        return Decision(False, limit, max(0, limit - hits),
                        _retry_after(freeing_ms, window_ms, now_ms),
                        _reset(int(oldest) if oldest is not None else None, window_ms, now_ms),
                        window)

    def peek(self, identities: list[str], *, window_ms: int, now_ms: int
             ) -> dict[str, Counted]:
        """One query: each identity's count and oldest time inside the window, no lock (a
        read needs none: a hit's own statement stays the one that decides)."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT identity, count(*), extract(epoch FROM min(at)) * 1000 FROM {TABLE} "
                "WHERE identity = ANY(%s) AND at > to_timestamp(%s / 1000.0) GROUP BY identity",
                [list(identities), now_ms - window_ms])
            found = {identity: (count, int(oldest)) for identity, count, oldest in cursor}
        return {identity: found.get(identity, (0, None)) for identity in identities}


@lru_cache(maxsize=4)
def _limiter(backend: str, url: str) -> RateLimiter:
    if backend == "redis":
        return RedisRateLimiter(url)
    return DatabaseRateLimiter()


def limiter() -> RateLimiter:
    return _limiter(settings.RATE_LIMIT_BACKEND, settings.REDIS_URL)


def hit(identity: str, *, limit: int, window_seconds: int, cost: int = 1) -> Decision:
    """Count `cost` requests of `identity` against `limit` per rolling `window_seconds`,
    all or none. A cost over the limit could never fit: refused, retry after a window (its
    window read, not counted, so the refusal still tells what is left)."""
    if cost > limit:
        used = usage({identity: limit}, window_seconds=window_seconds)[identity]
        return Decision(False, limit, used.remaining, window_seconds, used.reset,
                        window_seconds)
    return limiter().hit(identity, limit=limit, window_ms=window_seconds * 1000,
                         now_ms=clock(), cost=cost)


def usage(limits: dict[str, int], *, window_seconds: int) -> dict[str, Usage]:
    """Each identity's window (identity: its limit) as it stands, counting nothing: one
    round trip for all of them."""
    if not limits:
        return {}
    now_ms = clock()
    window_ms = window_seconds * 1000
    counted = limiter().peek(list(limits), window_ms=window_ms, now_ms=now_ms)
    return {identity: Usage(count, limits[identity], _reset(oldest, window_ms, now_ms),
                            window_seconds)
            for identity, (count, oldest) in counted.items()}


def count_request(identity: str, *, limit: int, cost: int = 1) -> Decision:
    """Count `cost` requests of a key's `identity` against `limit` a minute, or none."""
    return hit(identity, limit=limit, window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS,
               cost=cost)


def count_unauthenticated(address_key: str) -> Decision:
    """Count one request with a bad key from a client (echomem.client_address's key), in
    its own window."""
    return hit(f"address:{address_key}", limit=settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
               window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS)


def count_challenged(address_key: str) -> Decision:
    """Count one request that presented no credential, or an OAuth token we do not know,
    from a client: in a far larger window, since a connector relays many people's."""
    return hit(f"challenged:{address_key}", limit=settings.CHALLENGE_RATE_LIMIT_PER_MINUTE,
               window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS)


def count_refused_credential(identity: str) -> Decision:
    """Count one refused request of a known credential (an expired token of a connection)
    against that credential's own window, not its address's."""
    return hit(f"refused:{identity}", limit=settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
               window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS)


# --- rates written as text: "30/m", "5/h", "100/10m" (settings, environment variables) ------

@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"\s*(\d{1,9})\s*/\s*(\d{0,6})\s*([smhd])\s*")


def parse_rate(text: str, *, name: str = "rate") -> Rate:
    """`count/period`, the period in s, m, h or d, optionally with a multiple (`100/10m`);
    ConfigurationError naming `name` and the fix for anything else."""
    match = _RATE.fullmatch(text or "")
    if match is None or int(match[1]) < 1 or (match[2] and int(match[2]) < 1):
        raise ConfigurationError(
            f"{name}={text!r} is not a rate; write count/period with the period in s, m, h "
            "or d, e.g. 30/m, 5/h or 100/10m", field=name)
    return Rate(int(match[1]), int(match[2] or 1) * _UNIT_SECONDS[match[3]])


# --- the named limits (settings.WEB_RATE_LIMITS: sign-in, sign-up, ...) ---------------------

NAMED = "limit:"


def count_named(name: str, key: str) -> Decision:
    """Count one request against the named limit for `key` (an address, a person, a
    sign-in name), in that limit's own window. Keys are hashed: the rows and Redis keys
    hold no email (nor a password typed into the email field by mistake)."""
    rate = named_rate(name)
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return hit(f"{NAMED}{name}:{digest}", limit=rate.count, window_seconds=rate.seconds)


def named_rate(name: str) -> Rate:
    return parse_rate(settings.WEB_RATE_LIMITS[name], name=name)


def hits_expire(*, now_ms: int | None = None) -> int:
    """Delete the database limiter's counted requests that have left their window (each
    named limit its own, every other identity the per-key minute); returns how many. The
    limiter trims an identity only when it asks again."""
    now_ms = clock() if now_ms is None else now_ms

    def start(seconds: int) -> datetime:
        return datetime.fromtimestamp((now_ms - seconds * 1000) / 1000, tz=UTC)

    windows = {name: named_rate(name).seconds for name in settings.WEB_RATE_LIMITS}
    deleted = 0
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE NOT starts_with(identity, %s) AND at <= %s",
                       [NAMED, start(settings.RATE_LIMIT_WINDOW_SECONDS)])
        deleted += cursor.rowcount
        for name, seconds in windows.items():
            cursor.execute(f"DELETE FROM {TABLE} WHERE starts_with(identity, %s) AND at <= %s",
                           [f"{NAMED}{name}:", start(seconds)])
            deleted += cursor.rowcount
        # A limit no longer configured: its rows go once the longest window has passed.
        cursor.execute(f"DELETE FROM {TABLE} WHERE at <= %s",
                       [start(max([settings.RATE_LIMIT_WINDOW_SECONDS, *windows.values()]))])
        deleted += cursor.rowcount
    return deleted
