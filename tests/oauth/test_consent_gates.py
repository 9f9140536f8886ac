"""Consent is a sign-in: the password first (with the whole authorize request kept through
`next`), then the second factor where the person has one, then a recent check of who they
are; and, as for keys, a confirmed email address."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

from django.test import Client

from accounts import reauth
from accounts.models import Connection
from tests.oauth.conftest import Flow, pkce_pair
from tests.second_factor_codes import app_code
from tests.web.test_second_factor_sign_in import SECOND, app_on
from web.models import UnverifiedEmail
from web.verification import mark_unverified


def registered(client) -> Flow:
    answer = Flow(client, client_id="").register()
    assert answer.status_code == 201, answer.content
    return Flow(client, client_id=answer.json()["client_id"])


def test_signing_in_keeps_the_whole_request_and_lands_on_the_consent_page(db, alice):
    browser = Client()
    flow = registered(browser)
    _verifier, challenge = pkce_pair()
    asked = flow.authorize_url(challenge, state="keep-me")
    sent = browser.get(asked)
    assert sent.status_code == 302 and sent["Location"].startswith("/login/")
    next_ = parse_qs(urlsplit(sent["Location"]).query)["next"][0]
    assert next_ == asked  # every parameter, in order
    signed = browser.post("/login/?next=" + next_, {"username": "alice",
                                                    "password": "pw-alice", "next": next_})
    assert signed.status_code == 302 and signed["Location"] == asked
    page = browser.get(asked)
    assert page.status_code == 200 and b"Connect Test connector" in page.content


def test_a_person_with_a_second_factor_consents_only_after_it(db, alice):
    secret, _codes = app_on(alice.user)
    browser = Client()
    flow = registered(browser)
    _verifier, challenge = pkce_pair()
    asked = flow.authorize_url(challenge)
    browser.post("/login/", {"username": "alice", "password": "pw-alice", "next": asked})
    held = browser.get(asked)
    assert held.status_code == 302 and held["Location"].startswith(SECOND)
    assert not Connection.objects.exists()
    done = browser.post(SECOND, {"code": app_code(secret, steps_ahead=1), "next": asked})
    assert done["Location"] == asked
    assert browser.get(asked).status_code == 200


def test_a_stale_session_confirms_who_it_is_before_the_consent_page(signed_in, flow):
    session = signed_in.session
    session[reauth.IDENTITY_CHECKED_AT] = int(time.time()) - 3600
    session.save()
    _verifier, challenge = pkce_pair()
    asked = flow.authorize_url(challenge)
    held = signed_in.get(asked)
    assert held.status_code == 302 and held["Location"].startswith("/confirm/")
    assert parse_qs(urlsplit(held["Location"]).query)["next"][0] == asked
    # A consent posted from an old page is not taken either.
    posted = signed_in.post("/oauth/authorize", {"client_id": flow.client_id, "allow": "1"})
    assert posted.status_code == 302 and posted["Location"].startswith("/confirm/")
    assert not Connection.objects.exists()


def test_an_unconfirmed_email_confirms_it_before_consenting(signed_in, flow, alice):
    """A connection is a credential like a key, and keys wait for a confirmed address."""
    _verifier, challenge = pkce_pair()
    asked = flow.authorize_url(challenge)
    alice.user.email = "alice@example.com"
    alice.user.save()
    mark_unverified(alice.user)
    page = signed_in.get(asked)
    assert page.status_code == 403
    assert "Confirm your email before connecting an app" in page.content.decode()
    assert "alice@example.com" in page.content.decode()
    posted = signed_in.post("/oauth/authorize", {"client_id": flow.client_id, "allow": "1"})
    assert posted.status_code == 403 and not Connection.objects.exists()
    UnverifiedEmail.objects.filter(user=alice.user).delete()  # the link was opened
    assert signed_in.get(asked).status_code == 200
    assert flow.tokens()["access_token"].startswith("emat_")
