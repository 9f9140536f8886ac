"""The pages an attacker would hammer are limited per address, per sign-in name or per
person, in rolling windows of the same limiter as the API's per-key limit; a refused POST
gets a 429 page that says when to try again. Every limited page is found in the URLconf,
the admin's sign-in among them."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from accounts.models import ApiKey
from echomem import ratelimit
from echomem.errors import ConfigurationError
from tests.mcp.conftest import fake_clock  # noqa: F401

WRONG = {"password": "not the password"}
SIGN_IN = {"username": "ada@example.com", **WRONG}

# Every page under a limit: who posts (None: signed out), what, and its limits in the
# order they are counted. A new limited page must be added here, with its limits.
LIMITED = {
    "/login/": (None, SIGN_IN, ("login_ip", "login_email")),
    "/admin/login/": (None, SIGN_IN, ("login_ip", "login_email")),
    "/signup/": (None, {"email": "new@example.com", "password": "a long passphrase 42"},
                 ("signup_ip", "signup_email")),
    "/password-reset/": (None, {"email": "ada@example.com"},
                         ("password_reset_ip", "password_reset_email")),
    "/verify-email/resend/": ("alice", {}, ("verify_resend_user",)),
    "/keys/new/": ("alice", {"name": "laptop", "tool": "cursor"}, ("key_create_user",)),
    "/team/": ("alice", {"email": "new@example.com", "role": "member"}, ("invite_user",)),
    "/confirm/": ("alice", {"password": "not alice's"}, ("reauth_user",)),
    "/account/password/": ("alice", {"old_password": "not alice's"}, ("reauth_user",)),
}
PER_NAME = {"login_email", "signup_email", "password_reset_email"}
PER_ADDRESS = {"login_ip", "signup_ip", "password_reset_ip"}


@pytest.fixture
def limits(settings):
    def set_to(**rates: str) -> None:
        settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, **rates}
    return set_to


@pytest.fixture(params=["redis", "database"])
def backend(request, settings):
    settings.RATE_LIMIT_BACKEND = request.param
    return request.param


def assert_refused(reply, *, at_most: int = 60) -> None:
    assert reply.status_code == 429
    assert b"Too many attempts" in reply.content and b"Try again in" in reply.content
    assert 1 <= int(reply["Retry-After"]) <= at_most


def limited_routes() -> dict[str, tuple[str, ...]]:
    """Every route of the URLconf whose view counts against a limit, with its limits."""
    found = {}

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "web_limits"):
                found["/" + prefix + str(pattern.pattern)] = pattern.callback.web_limits

    walk(get_resolver().url_patterns, "")
    return found


def test_every_limited_page_is_known_and_the_admin_sign_in_is_one():
    assert limited_routes() == {path: names for path, (_, _, names) in LIMITED.items()}
    # The admin's own login route comes after ours: /admin/login/ is the limited view.
    assert resolve("/admin/login/").func.web_limits == ("login_ip", "login_email")


@pytest.mark.parametrize(("path", "limit"), [(path, name) for path, (_, _, names)
                                             in LIMITED.items() for name in names])
def test_each_limit_of_each_page_refuses_past_it_with_a_retry_after(client, alice, limits,
                                                                    path, limit):
    actor, data, names = LIMITED[path]
    limits(**{**dict.fromkeys(names, "1000/m"), limit: "1/m"})
    if actor:
        client.force_login(alice.user)
    first = client.post(path, data)
    assert first.status_code in (200, 302)
    again = dict(data)
    extra = {}
    if limit in PER_NAME:  # the same name from elsewhere is still the same name
        extra = {"REMOTE_ADDR": "192.0.2.7"}
    elif limit in PER_ADDRESS:  # another name from the same address is the same address
        again = {k: ("other@example.com" if k in ("email", "username") else v)
                 for k, v in data.items()}
    assert_refused(client.post(path, again, **extra))
    if path != "/verify-email/resend/":  # a POST-only action
        assert client.get(path).status_code == 200  # reading the page is never counted


def test_the_site_and_the_admin_sign_in_share_one_budget(client, db, limits):
    limits(login_email="3/m")
    for path in ("/login/", "/admin/login/", "/login/"):
        assert client.post(path, SIGN_IN).status_code == 200
    assert_refused(client.post("/admin/login/", SIGN_IN))
    limits(login_email="1000/m", login_ip="2/m")
    assert_refused(client.post("/admin/login/", {**SIGN_IN, "username": "root"}))


def test_the_admin_sign_in_still_signs_a_superuser_in(client, db):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("root", "root@example.com", "root passphrase 1")
    signed_in = client.post("/admin/login/", {"username": "ROOT", "password": "root passphrase 1",
                                              "next": "/admin/"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_a_refused_sign_in_does_not_sign_in_even_with_the_right_password(client, alice, limits):
    limits(login_email="1/m")
    client.post("/login/", {"username": "alice", **WRONG})
    assert_refused(client.post("/login/", {"username": "alice", "password": "pw-alice"}))
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_a_burst_straddling_a_minute_boundary_gets_no_more_than_the_limit(
        client, db, limits, backend, fake_clock, path):  # noqa: F811
    limits(login_ip="3/m")
    # 0.1 s before a whole minute: a fixed-minute counter would start again 0.2 s later.
    fake_clock.now = (fake_clock.now // 60_000 + 1) * 60_000 - 100
    for n in range(3):
        assert client.post(path, {**SIGN_IN, "username": f"u{n}@example.com"}).status_code == 200
    fake_clock.advance(0.2)
    refused = client.post(path, SIGN_IN)
    assert_refused(refused)
    assert refused["Retry-After"] == "60"  # the first attempt leaves the window in 59.8 s
    fake_clock.advance(59.7)
    assert_refused(client.post(path, SIGN_IN), at_most=1)
    fake_clock.advance(0.2)
    assert client.post(path, SIGN_IN).status_code == 200


def test_an_hour_long_limit_says_minutes(client, db, limits, backend, fake_clock):  # noqa: F811
    limits(signup_ip="2/h")
    for _ in range(2):
        client.post("/signup/", {"email": "bad", "password": "x"})
    refused = client.post("/signup/", {"email": "new@example.com",
                                       "password": "a long passphrase 42"})
    assert refused.status_code == 429 and b"minutes" in refused.content
    assert refused["Retry-After"] == "3600"
    fake_clock.advance(3600)
    assert client.post("/signup/", {"email": "bad", "password": "x"}).status_code == 200


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


def test_the_web_limits_count_in_the_apis_limiter(client, db, limits, backend):
    """One limiter, one kind of row: what the database limiter holds for a sign-in attempt
    names the limit but not the email."""
    limits(login_email="5/m")
    client.post("/login/", SIGN_IN)
    if backend == "database":
        from mcp_gateway.models import RateLimitHit

        identities = list(RateLimitHit.objects.values_list("identity", flat=True))
        assert sorted(i.split(":")[1] for i in identities) == ["login_email", "login_ip"]
        assert not any("ada" in identity for identity in identities)


@pytest.mark.parametrize(("text", "count", "seconds"), [
    ("30/m", 30, 60), ("5/h", 5, 3600), ("100/10m", 100, 600), (" 2 / d ", 2, 86400),
    ("1/s", 1, 1)])
def test_rates_are_written_count_per_period(text, count, seconds):
    assert ratelimit.parse_rate(text) == ratelimit.Rate(count, seconds)


@pytest.mark.parametrize("text", ["", "30", "30/min", "0/m", "-1/m", "5/0m", "x/m", "5/m/h"])
def test_a_rate_that_is_not_one_is_refused_naming_its_variable(text):
    with pytest.raises(ConfigurationError) as refused:
        ratelimit.parse_rate(text, name="ECHO_MEMORY_LOGIN_RATE_PER_IP")
    assert "ECHO_MEMORY_LOGIN_RATE_PER_IP" in refused.value.message
    assert "e.g. 30/m" in refused.value.message


def test_django_ratelimit_is_gone():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for name in ("requirements.txt", "pyproject.toml"):
        assert "django-ratelimit" not in (root / name).read_text()
