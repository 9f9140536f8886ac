"""240 requests per rolling minute per key, every request counted, on both backends."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from echomem import ratelimit
from mcp_gateway.models import RateLimitHit

BACKENDS = ["redis", "database"]


@pytest.fixture(params=BACKENDS)
def backend(request, settings):
    settings.RATE_LIMIT_BACKEND = request.param
    settings.RATE_LIMIT_PER_MINUTE = 240
    return request.param


def test_the_241st_request_in_a_minute_is_429_until_retry_after_passes(
        backend, mcp_for, alice, fake_clock):
    session = mcp_for(alice)  # initialize and notifications/initialized: 2 requests
    for _ in range(238):
        fake_clock.advance(0.1)
        assert session.request("ping").status_code == 200
    fake_clock.advance(0.1)
    refused = session.request("ping")
    assert refused.status_code == 429
    # The first request left the window 60 s after it was made: 60 - 23.9 s from now.
    assert refused["Retry-After"] == "37"
    error = refused.json()["error"]
    assert error["data"]["retry_after"] == 37
    assert "37 seconds" in error["message"]
    fake_clock.advance(36)
    assert session.request("ping").status_code == 429
    fake_clock.advance(1)
    assert session.request("ping").status_code == 200


def test_initialize_notifications_and_refusals_of_the_endpoint_all_count(
        backend, mcp_for, alice, settings, fake_clock):
    settings.RATE_LIMIT_PER_MINUTE = 4
    session = mcp_for(alice)                                # 2
    assert session.request("nope").status_code == 200       # 3: unknown method still counts
    assert session.notify("notifications/x").status_code == 202  # 4
    refused = session.request("initialize", {"protocolVersion": "2025-06-18"})
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"


def test_each_key_has_its_own_window(backend, mcp_for, alice, bob, settings, fake_clock):
    settings.RATE_LIMIT_PER_MINUTE = 3
    alices = mcp_for(alice)
    alices.request("ping")
    assert alices.request("ping").status_code == 429
    assert mcp_for(bob).request("ping").status_code == 200


def test_a_keyless_self_hosted_principal_is_limited_under_one_fixed_identity(
        backend, mcp_for, alice, settings, fake_clock):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    settings.RATE_LIMIT_PER_MINUTE = 2
    mcp_for(None)  # initialize + notifications/initialized
    another_client = mcp_for(None, initialize=False)
    refused = another_client.request("initialize", {"protocolVersion": "2025-06-18"})
    assert refused.status_code == 429


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("backend_name", BACKENDS)
def test_concurrent_requests_never_overshoot_the_limit(backend_name, settings):
    settings.RATE_LIMIT_BACKEND = backend_name
    limiter = ratelimit.limiter()
    identity = f"concurrency-{backend_name}-{threading.get_ident()}"
    outcomes: list[bool] = []
    barrier = threading.Barrier(12)

    def hit() -> None:
        try:
            barrier.wait()
            for _ in range(5):
                decision = limiter.hit(identity, limit=25, window_ms=60_000,
                                       now_ms=ratelimit.clock())
                outcomes.append(decision.allowed)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=hit) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 60
    assert outcomes.count(True) == 25
    if backend_name == "database":
        assert RateLimitHit.objects.filter(identity=identity).count() == 25


def test_the_database_backend_forgets_hits_that_left_the_window(db, settings):
    limiter = ratelimit.DatabaseRateLimiter()
    for second in range(3):
        limiter.hit("k", limit=3, window_ms=10_000, now_ms=second * 1000)
    assert not limiter.hit("k", limit=3, window_ms=10_000, now_ms=9_000).allowed
    assert limiter.hit("k", limit=3, window_ms=10_000, now_ms=10_500).allowed
    assert RateLimitHit.objects.filter(identity="k").count() == 3


# A self-hosted box's operator may give a key its own limit (accounts.services
# api_key_rate_limit_set: the admin and `echo-memory manage key_rate_limit`).

def _rate_of(actor, rate):
    from accounts.services import api_key_rate_limit_set

    api_key_rate_limit_set(key=actor.key, requests_per_minute=rate)


def test_a_self_hosted_key_with_its_own_limit_is_held_to_it_at_both_doors(
        backend, mcp_for, client, alice, bob, settings, fake_clock):
    settings.SELF_HOSTED = True
    settings.RATE_LIMIT_PER_MINUTE = 0  # the box's default: 240
    _rate_of(alice, 3)
    mcp_for(alice)  # 2 requests on /mcp
    headers = {"Authorization": f"Bearer {alice.plaintext}"}
    assert client.get("/api/v1/memories", headers=headers).status_code == 200
    refused = client.get("/api/v1/memories", headers=headers)
    assert refused.status_code == 429 and refused.json()["error"]["limit"] == 3
    for _ in range(5):  # another key keeps the default
        assert mcp_for(bob).request("ping").status_code == 200
    _rate_of(alice, None)  # back to the default, from the next request on
    assert client.get("/api/v1/memories", headers=headers).status_code == 200


def test_a_keys_own_limit_beats_the_box_wide_setting_both_ways(backend, mcp_for, alice,
                                                                settings, fake_clock):
    settings.SELF_HOSTED = True
    settings.RATE_LIMIT_PER_MINUTE = 2
    _rate_of(alice, 5)
    session = mcp_for(alice)
    for _ in range(3):
        assert session.request("ping").status_code == 200
    assert session.request("ping").status_code == 429


def test_the_hosted_service_keeps_the_plans_rate_whatever_a_key_says(backend, mcp_for, alice,
                                                                     settings, fake_clock):
    from accounts.models import ApiKey

    settings.SELF_HOSTED = False
    settings.RATE_LIMIT_PER_MINUTE = 0
    ApiKey.objects.filter(pk=alice.key.pk).update(requests_per_minute=1)  # e.g. left from
    session = mcp_for(alice)  # a self-hosted past: 2 requests already
    for _ in range(10):
        assert session.request("ping").status_code == 200


# What a hit answers besides yes or no (the RateLimit headers send it), and the read that
# counts nothing (the keys page), on both backends.

def test_a_hit_says_what_is_left_and_when_the_oldest_leaves(backend, db, fake_clock):
    limiter = ratelimit.limiter()
    first = limiter.hit("w", limit=3, window_ms=10_000, now_ms=0)
    assert (first.allowed, first.remaining, first.reset, first.window) == (True, 2, 10, 10)
    assert limiter.hit("w", limit=3, window_ms=10_000, now_ms=2_500).reset == 8  # 7.5 s up
    batch = limiter.hit("w", limit=3, window_ms=10_000, now_ms=3_000, cost=3)
    assert (batch.allowed, batch.remaining, batch.reset) == (False, 1, 7)  # refused, 1 left
    assert batch.retry_after == 10  # room for three: when the second counted leaves, at 12.5
    last = limiter.hit("w", limit=3, window_ms=10_000, now_ms=3_000)
    assert (last.allowed, last.remaining, last.reset) == (True, 0, 7)
    refused = limiter.hit("w", limit=3, window_ms=10_000, now_ms=4_000)
    assert (refused.allowed, refused.remaining, refused.reset, refused.retry_after) == (
        False, 0, 6, 6)
    moved_on = limiter.hit("w", limit=3, window_ms=10_000, now_ms=10_000)  # the first left
    assert (moved_on.allowed, moved_on.remaining, moved_on.reset) == (True, 0, 3)


def test_the_read_counts_nothing_and_agrees_with_the_hits(backend, db, fake_clock):
    for _ in range(3):
        ratelimit.count_request("key:1", limit=5)
        fake_clock.advance(2)
    read = ratelimit.usage({"key:1": 5, "key:2": 7}, window_seconds=60)
    again = ratelimit.usage({"key:1": 5, "key:2": 7}, window_seconds=60)
    assert read == again
    assert (read["key:1"].used, read["key:1"].remaining, read["key:1"].reset) == (3, 2, 54)
    assert (read["key:2"].used, read["key:2"].limit, read["key:2"].reset) == (0, 7, 0)
    assert ratelimit.count_request("key:1", limit=5).remaining == 1
    fake_clock.advance(57)  # at 63 s: those of 0 and 2 s left the window
    assert ratelimit.usage({"key:1": 5}, window_seconds=60)["key:1"].used == 2


def test_a_batch_over_the_whole_limit_is_refused_with_the_window_as_it_is(backend, db,
                                                                           fake_clock):
    ratelimit.count_request("key:1", limit=4)
    too_big = ratelimit.count_request("key:1", limit=4, cost=5)
    assert (too_big.allowed, too_big.remaining, too_big.reset) == (False, 3, 60)
    assert ratelimit.usage({"key:1": 4}, window_seconds=60)["key:1"].used == 1


def test_counting_stays_one_round_trip(backend, db, fake_clock, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    limiter = ratelimit.limiter()
    sent = []
    if backend == "redis":
        real = limiter.client.execute_command
        monkeypatch.setattr(limiter.client, "execute_command",
                            lambda *args, **kwargs: sent.append(args[0]) or real(*args, **kwargs))
    with CaptureQueriesContext(connection) as queries:
        ratelimit.count_request("key:1", limit=5)
        ratelimit.count_request("key:1", limit=5)
    if backend == "redis":
        assert len(queries) == 0 and len(sent) == 2, sent  # EVALSHA each (loaded once before)
    else:
        assert len(queries) == 2 and not sent
