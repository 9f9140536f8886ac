"""The sessions page: alice sees every browser signed in as her (device, network, when signed
in, last seen, which one is this), signs one out or all the others, and a signed-out session
is really over (its browser is sent to sign in). Last seen is written at most every
SESSION_SEEN_EVERY seconds, never per request. The admin's sign-in is listed too."""

from __future__ import annotations

import time

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts import sessions
from accounts.models import SignedInSession
from accounts.where_from import device_of, network_of
from tests.factories import session_for, signed_in_elsewhere

FIREFOX = ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
HERE = {"REMOTE_ADDR": "203.0.113.9", "HTTP_USER_AGENT": FIREFOX}


def _signed_in(user, password: str, **meta) -> Client:
    browser = Client()
    reply = browser.post("/login/", {"username": user.username, "password": password},
                         **{**HERE, **meta})
    assert reply.status_code == 302
    return browser


def _browser_with(session_key: str) -> Client:
    browser = Client()
    browser.cookies["sessionid"] = session_key
    return browser


def test_the_page_lists_each_session_with_its_device_network_and_this_one(alice):
    browser = _signed_in(alice.user, "pw-alice")
    signed_in_elsewhere(alice.user)
    page = browser.get("/account/sessions/", **HERE).content.decode()
    assert "Firefox on Linux" in page and "203.0.113.0/24" in page
    assert "Safari on iPhone" in page and "198.51.100.0/24" in page
    assert page.count("this session") == 1 and "Sign out all other sessions (1)" in page
    assert "UTC" in page


def test_signing_one_out_ends_that_browsers_session(alice):
    browser = _signed_in(alice.user, "pw-alice")
    phone = signed_in_elsewhere(alice.user)
    other = _browser_with(phone.session_key)
    assert other.get("/dashboard/").status_code == 200
    done = browser.post(f"/account/sessions/{phone.pk}/sign-out/", follow=True)
    assert "The session on Safari on iPhone is signed out." in done.content.decode()
    assert other.get("/dashboard/")["Location"].startswith("/login/")
    assert not Session.objects.filter(session_key=phone.session_key).exists()
    assert not SignedInSession.objects.filter(pk=phone.pk).exists()
    assert browser.get("/dashboard/").status_code == 200


def test_signing_out_all_others_keeps_this_one(alice):
    browser = _signed_in(alice.user, "pw-alice")
    others = [signed_in_elsewhere(alice.user) for _ in range(2)]
    done = browser.post("/account/sessions/sign-out-others/", follow=True).content.decode()
    assert "2 other sessions signed out; this one stays signed in." in done
    for row in others:
        assert _browser_with(row.session_key).get("/dashboard/").status_code == 302
    assert browser.get("/dashboard/").status_code == 200
    assert SignedInSession.objects.filter(user=alice.user).count() == 1
    again = browser.post("/account/sessions/sign-out-others/", follow=True).content.decode()
    assert "There were no other sessions to sign out." in again


def test_another_persons_session_and_this_one_are_not_found(alice, bob):
    browser = _signed_in(alice.user, "pw-alice")
    bobs = signed_in_elsewhere(bob.user)
    assert browser.post(f"/account/sessions/{bobs.pk}/sign-out/").status_code == 404
    assert _browser_with(bobs.session_key).get("/dashboard/").status_code == 200
    mine = SignedInSession.objects.get(user=alice.user)
    assert browser.post(f"/account/sessions/{mine.pk}/sign-out/").status_code == 404
    assert browser.get(f"/account/sessions/{mine.pk}/sign-out/").status_code == 405
    assert "Sign out all" not in browser.get("/account/sessions/").content.decode()


def test_the_admins_sign_in_is_listed_as_the_admin_site(alice):
    alice.user.is_staff = alice.user.is_superuser = True
    alice.user.save()
    admin = Client()
    assert admin.post("/admin/login/", {"username": "alice", "password": "pw-alice",
                                        "next": "/admin/"}, **HERE).status_code == 302
    row = SignedInSession.objects.get(user=alice.user)
    assert row.door == "admin" and row.network == "203.0.113.0/24"
    page = admin.get("/account/sessions/").content.decode()
    assert "admin site" in page and "this session" in page


def test_signing_out_removes_the_row(alice):
    browser = _signed_in(alice.user, "pw-alice")
    assert SignedInSession.objects.filter(user=alice.user).count() == 1
    browser.post("/logout/")
    assert not SignedInSession.objects.filter(user=alice.user).exists()


def _updates_of_sessions(queries) -> list[str]:
    return [q["sql"] for q in queries if "accounts_signedinsession" in q["sql"]
            and q["sql"].startswith(("UPDATE", "INSERT"))]


def test_last_seen_is_written_at_most_every_few_minutes(alice, settings):
    settings.SESSION_SEEN_EVERY = 300
    browser = _signed_in(alice.user, "pw-alice")
    row = SignedInSession.objects.get(user=alice.user)
    with CaptureQueriesContext(connection) as seen:
        for _ in range(5):
            assert browser.get("/dashboard/", REMOTE_ADDR="192.0.2.1").status_code == 200
    assert _updates_of_sessions(seen.captured_queries) == []
    session = browser.session
    session[sessions.SEEN_AT] = int(time.time()) - 301
    session.save()
    with CaptureQueriesContext(connection) as seen:
        browser.get("/dashboard/", REMOTE_ADDR="192.0.2.1")
        browser.get("/dashboard/", REMOTE_ADDR="192.0.2.1")
    assert len(_updates_of_sessions(seen.captured_queries)) == 1
    moved = SignedInSession.objects.get(pk=row.pk)
    assert moved.last_seen_at > row.last_seen_at and moved.network == "192.0.2.0/24"


def test_a_session_from_before_sessions_were_listed_appears_when_used(alice):
    browser = _browser_with(session_for(alice.user))
    page = browser.get("/account/sessions/").content.decode()
    assert "before sessions were listed" in page and "this session" in page


def test_agents_calls_touch_no_session_row(alice):
    with CaptureQueriesContext(connection) as seen:
        Client().get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {alice.plaintext}")
    assert not [q for q in seen.captured_queries if "signedinsession" in q["sql"]]


@pytest.mark.parametrize(("agent", "shown"), [
    (FIREFOX, "Firefox on Linux"),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/126.0 Safari/537.36 Edg/126.0", "Edge on Windows"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.5 Safari/605.1.15", "Safari on macOS"),
    ("curl/8.5.0", "curl"), ("", "unknown device"), ("x" * 300, "x" * 79 + "…"),
    ("Bot\x00\u2028", "Bot"),
])
def test_the_device_is_the_browser_and_system_kept_short(agent, shown):
    assert device_of(agent) == shown


@pytest.mark.parametrize(("address", "shown"), [
    ("203.0.113.77", "203.0.113.0/24"), ("2001:db8:1:2::5", "2001:db8:1::/48"),
    ("::ffff:198.51.100.3", "198.51.100.0/24"), ("127.0.0.1", "loopback"),
    ("::1", "loopback"), ("", "unknown"), ("not an address", "not an address"),
])
def test_the_network_is_the_addresses_block(settings, address, shown):
    assert network_of({"REMOTE_ADDR": address}) == shown
