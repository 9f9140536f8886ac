"""Sensitive actions ask the person to confirm it's them when their session's last check is
older than REAUTH_MAX_AGE: creating a key, deleting a memory or the account, the plan
(checkout, portal) and the team (invite, role, remove, revoke an invitation).

For each: a fresh session goes straight through; a stale one is sent to "Confirm it's you"
and nothing changes (a refused POST comes back to its form, told to send it again); after
the password the action works; a wrong password is an error next to the password field.
Every guarded route of the URLconf is in the table, so a new one cannot skip these tests."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from accounts import reauth
from accounts.models import Account, ApiKey, Connection, Invitation, Membership
from accounts.team import token_hash
from billing import payments
from memories.graph.services import memory_create
from memories.models import Memory
from tests.billing.usage_rows import sell
from tests.web.test_security_headers import _connection
from web import billing as billing_pages


def _stale(client) -> None:
    """The session's last check, an hour ago."""
    session = client.session
    session[reauth.IDENTITY_CHECKED_AT] = int(time.time()) - 3600
    session.save()


@dataclass
class Action:
    route: str  # as the URLconf writes it
    path: str  # with alice's own objects
    data: dict[str, str]
    done: Any  # (world) -> whether the action took place
    form: str  # the page a refused POST comes back to
    get_guarded: bool = True  # reading the page asks too


def _world(alice, bob, settings, monkeypatch) -> dict[str, Any]:
    memory_create(account_id=alice.account.pk, name="scratch")
    invitation = Invitation.objects.create(
        account=alice.account, email="grace@example.com", token_hash=token_hash("t" * 40),
        invited_by=alice.user, expires_at=timezone.now() + timedelta(days=1))
    settings.STRIPE_SECRET_KEY = "sk_test_reauth"
    sell("pro", "price_pro_test")
    went: list[str] = []
    monkeypatch.setattr(payments, "checkout_url",
                        lambda **_: went.append("checkout") or "https://checkout.stripe.com/x")
    monkeypatch.setattr(payments, "portal_url",
                        lambda **_: went.append("portal") or "https://billing.stripe.com/x")
    monkeypatch.setattr(billing_pages, "has_stripe_customer", lambda account: True)
    return {"bob_membership": Membership.objects.get(user=bob.user), "invitation": invitation,
            "went": went, "connection": _connection(bob)}


def _actions(alice, bob, world) -> dict[str, Action]:
    member_id = world["bob_membership"].pk
    invitation_id = world["invitation"].pk
    connection_id = world["connection"].pk
    return {action.route: action for action in [
        Action("keys/new/", "/keys/new/", {"name": "phone", "tool": "cursor"},
               lambda: ApiKey.objects.filter(name="phone").exists(), "/keys/new/"),
        Action("memories/<str:name>/delete/", "/memories/scratch/delete/",
               {"confirm": "scratch"},
               lambda: not Memory.objects.filter(name="scratch").exists(),
               "/memories/scratch/delete/"),
        Action("account/delete/", "/account/delete/", {"confirm": "Alice's team"},
               lambda: not Account.objects.filter(pk=alice.account.pk).exists(),
               "/account/delete/"),
        Action("team/", "/team/", {"email": "dora@example.com", "role": "member"},
               lambda: Invitation.objects.filter(email="dora@example.com").exists(), "/team/",
               get_guarded=False),
        Action("team/members/<int:member_id>/role/", f"/team/members/{member_id}/role/",
               {"role": "admin"},
               lambda: Membership.objects.get(pk=member_id).role == "admin",
               f"/team/members/{member_id}/role/"),
        Action("team/members/<int:member_id>/remove/", f"/team/members/{member_id}/remove/",
               {}, lambda: not Membership.objects.filter(pk=member_id).exists(),
               f"/team/members/{member_id}/remove/"),
        Action("team/invitations/<int:invitation_id>/revoke/",
               f"/team/invitations/{invitation_id}/revoke/", {},
               lambda: Invitation.objects.get(pk=invitation_id).revoked_at is not None,
               f"/team/invitations/{invitation_id}/revoke/"),
        Action("billing/checkout/", "/billing/checkout/", {"plan": "pro"},
               lambda: "checkout" in world["went"], "/billing", get_guarded=False),
        Action("billing/portal/", "/billing/portal/", {},
               lambda: "portal" in world["went"], "/billing", get_guarded=False),
        Action("apps/<int:connection_id>/revoke/", f"/apps/{connection_id}/revoke/", {},
               lambda: Connection.objects.get(pk=connection_id).revoked_at is not None,
               f"/apps/{connection_id}/revoke/", get_guarded=False),
    ]}


ROUTES = ["keys/new/", "memories/<str:name>/delete/", "account/delete/", "team/",
          "team/members/<int:member_id>/role/", "team/members/<int:member_id>/remove/",
          "team/invitations/<int:invitation_id>/revoke/", "billing/checkout/",
          "billing/portal/", "apps/<int:connection_id>/revoke/"]


@pytest.fixture
def actions(alice, bob, settings, monkeypatch) -> dict[str, Action]:
    return _actions(alice, bob, _world(alice, bob, settings, monkeypatch))


def guarded_routes() -> set[str]:
    found = set()

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and getattr(pattern.callback, "web_reauth",
                                                             False):
                found.add(prefix + str(pattern.pattern))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_guarded_route_is_tested_here():
    assert guarded_routes() == set(ROUTES)


def _confirm_page(response) -> str:
    """The `next` of a redirect to the confirm page (failing if it is not one)."""
    assert response.status_code == 302, response.status_code
    where = urlsplit(response["Location"])
    assert where.path == "/confirm/"
    return parse_qs(where.query)["next"][0]


@pytest.mark.parametrize("route", ROUTES)
def test_a_fresh_session_acts_at_once(client, alice, actions, route):
    action = actions[route]
    client.force_login(alice.user)  # a sign-in is a check
    response = client.post(action.path, action.data)
    assert response.status_code == 302 and not response["Location"].startswith("/confirm/")
    assert action.done()


@pytest.mark.parametrize("route", ROUTES)
def test_a_stale_session_is_asked_to_confirm_and_nothing_changes(client, alice, actions,
                                                                  route):
    action = actions[route]
    client.force_login(alice.user)
    _stale(client)
    if action.get_guarded:
        assert _confirm_page(client.get(action.path)) == action.path
    else:
        assert client.get(action.form).status_code == 200  # reading needs no check
    refused = client.post(action.path, action.data)
    assert _confirm_page(refused) == action.form
    assert not action.done()
    page = client.get(refused["Location"])
    assert page.status_code == 200 and "<h1 class=\"h3 mb-3\">Confirm it's you</h1>" \
        in page.content.decode()
    assert "Nothing was changed yet: confirm it&#x27;s you, then send the form again." \
        in page.content.decode()


@pytest.mark.parametrize("route", ROUTES)
def test_after_the_password_the_action_works(client, alice, actions, route):
    action = actions[route]
    client.force_login(alice.user)
    _stale(client)
    back_to = _confirm_page(client.post(action.path, action.data))
    confirmed = client.post("/confirm/", {"password": "pw-alice", "next": back_to})
    assert confirmed.status_code == 302 and confirmed["Location"] == back_to
    assert client.get(back_to).status_code == 200  # the form again, to send
    response = client.post(action.path, action.data)
    assert response.status_code == 302 and not response["Location"].startswith("/confirm/")
    assert action.done()


@pytest.mark.parametrize("route", ROUTES)
def test_a_wrong_password_is_an_error_next_to_the_field(client, alice, actions, route):
    action = actions[route]
    client.force_login(alice.user)
    _stale(client)
    back_to = _confirm_page(client.post(action.path, action.data))
    page = client.post("/confirm/", {"password": "not the password", "next": back_to})
    html = page.content.decode()
    assert page.status_code == 200
    assert 'class="form-control is-invalid" type="password"' in html
    assert "that password is not right: type it again" in html
    assert _confirm_page(client.post(action.path, action.data)) == action.form
    assert not action.done()


def test_an_empty_password_says_what_to_type(client, alice):
    client.force_login(alice.user)
    _stale(client)
    page = client.post("/confirm/", {"password": "", "next": "/keys/new/"})
    assert "Type your password to go on." in page.content.decode()


@pytest.mark.parametrize("elsewhere", ["https://evil.example/", "//evil.example/",
                                       "javascript:alert(1)", "keys/new/", "/\x00", ""])
def test_the_way_back_stays_on_this_site(client, alice, elsewhere):
    client.force_login(alice.user)
    _stale(client)
    confirmed = client.post("/confirm/", {"password": "pw-alice", "next": elsewhere})
    assert confirmed.status_code == 302 and confirmed["Location"] == "/dashboard/"


def test_the_check_expires_after_the_configured_age(client, alice, settings):
    client.force_login(alice.user)
    assert client.get("/keys/new/").status_code == 200
    session = client.session
    session[reauth.IDENTITY_CHECKED_AT] = int(time.time()) - 301
    session.save()
    settings.REAUTH_MAX_AGE = 300
    _confirm_page(client.get("/keys/new/"))
    settings.REAUTH_MAX_AGE = 600
    assert client.get("/keys/new/").status_code == 200


def test_a_session_from_before_checks_were_kept_is_asked(client, alice):
    client.force_login(alice.user)
    session = client.session
    del session[reauth.IDENTITY_CHECKED_AT]
    session.save()
    _confirm_page(client.get("/keys/new/"))


def test_signed_out_is_sent_to_sign_in_not_to_confirm(client, db):
    assert client.get("/keys/new/")["Location"].startswith("/login/")
    assert client.get("/confirm/")["Location"].startswith("/login/")


def test_another_verifier_is_offered_and_checked_beside_the_password(client, alice,
                                                                     monkeypatch):
    """How a second factor joins the page: one registered Verifier, no change to the page."""
    monkeypatch.setattr(reauth, "VERIFIERS", dict(reauth.VERIFIERS))
    reauth.register_verifier(reauth.Verifier(
        kind="code", label="Code from your authenticator app", input="code",
        autocomplete="one-time-code", check=lambda user, value: value == "123456",
        applies=lambda user: user.username == "alice", fix="type the code it shows now"))
    client.force_login(alice.user)
    _stale(client)
    page = client.get("/confirm/?next=/keys/new/").content.decode()
    assert 'name="password"' in page and 'name="code"' in page
    wrong = client.post("/confirm/", {"code": "654321", "next": "/keys/new/"}).content.decode()
    assert "that code from your authenticator app is not right: type the code it shows now" \
        in wrong
    confirmed = client.post("/confirm/", {"code": "123456", "next": "/keys/new/"})
    assert confirmed["Location"] == "/keys/new/"
    assert client.get("/keys/new/").status_code == 200


def test_a_person_without_a_password_is_told_how_to_set_one(client, alice):
    alice.user.set_unusable_password()
    alice.user.save()
    client.force_login(alice.user)
    _stale(client)
    page = client.post("/confirm/", {"next": "/keys/new/"}).content.decode()
    assert "This account has no password to confirm it with" in page
