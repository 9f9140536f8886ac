"""Sign-in, sign-up, password reset and key creation are limited per address, per email or
per person; a refused request gets a 429 page that says when to try again. Without Redis
the counts live in PostgreSQL, where concurrent increments must never lose one."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.core.checks import Error
from django.db import connection
from django.utils import timezone
from django_ratelimit.checks import check_caches

from accounts.models import ApiKey
from web.models import RateCounter

WRONG = {"password": "not the password"}


@pytest.fixture
def limits(settings):
    def set_to(**rates: str) -> None:
        settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, **rates}
    return set_to


def assert_refused(reply) -> None:
    assert reply.status_code == 429
    assert b"Too many attempts" in reply.content and b"Try again in" in reply.content
    assert 1 <= int(reply["Retry-After"]) <= 60


def test_sign_in_is_limited_per_email_in_any_case(client, db, limits):
    limits(login_email="3/m")
    for typed in ("ada@example.com", "ADA@example.com", " Ada@Example.com"):
        assert client.post("/login/", {"username": typed, **WRONG}).status_code == 200
    assert_refused(client.post("/login/", {"username": "ada@example.com", **WRONG}))
    # Another email from the same address is still answered; reading the page is not counted.
    assert client.post("/login/", {"username": "bea@example.com", **WRONG}).status_code == 200
    assert client.get("/login/").status_code == 200


def test_sign_in_is_limited_per_address(client, db, limits):
    limits(login_ip="2/m")
    for n in range(2):
        client.post("/login/", {"username": f"user{n}@example.com", **WRONG})
    assert_refused(client.post("/login/", {"username": "user9@example.com", **WRONG}))
    other = client.post("/login/", {"username": "user9@example.com", **WRONG},
                        REMOTE_ADDR="192.0.2.7")
    assert other.status_code == 200


def test_a_refused_sign_in_does_not_sign_in_even_with_the_right_password(client, alice, limits):
    limits(login_email="1/m")
    client.post("/login/", {"username": "alice", **WRONG})
    assert_refused(client.post("/login/", {"username": "alice", "password": "pw-alice"}))
    assert "_auth_user_id" not in client.session


def test_sign_up_is_limited_per_address(client, db, limits):
    limits(signup_ip="2/h")
    for _ in range(2):
        client.post("/signup/", {"email": "bad", "password": "x"})
    refused = client.post("/signup/", {"email": "new@example.com",
                                       "password": "a long passphrase 42"})
    assert refused.status_code == 429 and b"Try again in" in refused.content
    assert b"minutes" in refused.content and 60 < int(refused["Retry-After"]) <= 3600


def test_password_reset_is_limited_per_email_and_per_address(client, db, limits):
    limits(password_reset_email="2/h", password_reset_ip="3/h")
    for _ in range(2):
        assert client.post("/password-reset/", {"email": "ada@example.com"}).status_code == 302
    assert client.post("/password-reset/", {"email": "ADA@example.com"}).status_code == 429
    assert client.post("/password-reset/", {"email": "bea@example.com"}).status_code == 429


def test_key_creation_is_limited_per_person(client, alice, bob, limits):
    limits(key_create_user="2/h")
    client.force_login(alice.user)
    for n in range(2):
        assert client.post("/keys/new/", {"name": f"k{n}", "tool": "cursor"},
                           follow=True).status_code == 200
    refused = client.post("/keys/new/", {"name": "k3", "tool": "cursor"})
    assert refused.status_code == 429 and b"Try again in" in refused.content
    assert ApiKey.objects.filter(holder=alice.user, revoked_at__isnull=True).count() == 3
    client.force_login(bob.user)  # another person in the same account is not affected
    assert client.post("/keys/new/", {"name": "k4", "tool": "cursor"},
                       follow=True).status_code == 200


def test_redis_counts_the_same_way(client, db, limits, settings):
    settings.CACHES = {**settings.CACHES, "ratelimit": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": settings.REDIS_URL, "KEY_PREFIX": f"echo-test-{uuid.uuid4().hex}"}}
    limits(login_email="2/m")
    for _ in range(2):
        client.post("/login/", {"username": "ada@example.com", **WRONG})
    assert_refused(client.post("/login/", {"username": "ada@example.com", **WRONG}))


def test_the_counting_cache_adds_once_and_takes_over_an_expired_window(db):
    counters = caches["ratelimit"]
    assert counters.add("k", 1, 60) is True
    assert counters.add("k", 1, 60) is False
    assert counters.incr("k") == 2 and counters.incr("k", 5) == 7 and counters.get("k") == 7
    RateCounter.objects.filter(key__endswith="k").update(
        expires=timezone.now() - timedelta(seconds=1))
    assert counters.get("k") is None
    with pytest.raises(ValueError):
        counters.incr("k")
    assert counters.add("k", 1, 60) is True and counters.get("k") == 1
    with pytest.raises(TypeError):
        counters.set("other", "a string", 60)


@pytest.mark.django_db(transaction=True)
def test_concurrent_increments_never_lose_a_count():
    counters, threads, each = caches["ratelimit"], 8, 40
    counters.add("burst", 0, 60)
    start = threading.Barrier(threads)
    seen: list[int] = []

    def hammer() -> None:
        try:
            start.wait()
            for _ in range(each):
                seen.append(counters.incr("burst"))
        finally:
            connection.close()

    workers = [threading.Thread(target=hammer) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert counters.get("burst") == threads * each
    assert sorted(seen) == list(range(1, threads * each + 1))  # every count handed out once


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_requests_open_one_window():
    counters, threads = caches["ratelimit"], 8
    start = threading.Barrier(threads)
    added: list[bool] = []

    def first() -> None:
        try:
            start.wait()
            added.append(counters.add("fresh", 1, 60))
        finally:
            connection.close()

    workers = [threading.Thread(target=first) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert added.count(True) == 1


@pytest.mark.parametrize("backend", ["web.counting_cache.CountingCache",
                                     "django.core.cache.backends.redis.RedisCache"])
def test_the_ratelimit_checks_pass_for_both_backends(settings, backend):
    settings.CACHES = {**settings.CACHES, "ratelimit": {"BACKEND": backend, "LOCATION": ""}}
    found = check_caches(None)
    assert not [c for c in found if isinstance(c, Error)]
    assert {c.id for c in found} <= set(settings.SILENCED_SYSTEM_CHECKS)


def test_djangos_own_database_cache_is_still_refused(settings):
    settings.CACHES = {**settings.CACHES, "ratelimit": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "echo_cache"}}
    assert "django_ratelimit.E003" in {c.id for c in check_caches(None)}


def test_an_ipv6_client_counts_per_64(client, db, limits):
    limits(login_ip="1/m")
    client.post("/login/", {"username": "a@example.com", **WRONG},
                REMOTE_ADDR="2001:db8:1:2::10")
    assert client.post("/login/", {"username": "b@example.com", **WRONG},
                       REMOTE_ADDR="2001:db8:1:2:ffff::1").status_code == 429
    assert client.post("/login/", {"username": "c@example.com", **WRONG},
                       REMOTE_ADDR="2001:db8:1:3::10").status_code == 200
