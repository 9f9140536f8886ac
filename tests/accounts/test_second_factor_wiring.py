"""What follows a second factor's change, whichever page made it: adding or removing one is
a security event (audited in the person's accounts, mailed to them), and turning one off
signs out every other session of the person. On the confirm-it's-you page, a code from the
app or an unused recovery code stands in for the password."""

from __future__ import annotations

import time

import pytest
from django.contrib.sessions.models import Session
from django.core import mail

from accounts import reauth
from accounts import second_factors as factors
from accounts.models import SignedInSession
from accounts.second_factor_policy import set_factor_required
from accounts.security_events import SECOND_FACTOR_ADDED, SECOND_FACTOR_REMOVED
from audit.models import AuditEvent
from echomem.errors import ValidationFailed
from tests.accounts.test_second_factors import app_on, passkey_for
from tests.factories import signed_in_elsewhere
from tests.second_factor_codes import app_code


def _actions(user) -> list[str]:
    return list(AuditEvent.objects.filter(holder_id=user.pk, action__startswith="security.")
                .order_by("pk").values_list("action", flat=True))


def _owner_with_email(alice):
    alice.user.email = "alice@example.com"
    alice.user.save(update_fields=["email"])
    return alice.user


def test_the_app_and_a_passkey_added_are_audited_and_mailed(
        alice, django_capture_on_commit_callbacks):
    user = _owner_with_email(alice)
    with django_capture_on_commit_callbacks(execute=True):
        app_on(user)
        passkey_for(user)
    assert _actions(user) == [SECOND_FACTOR_ADDED, SECOND_FACTOR_ADDED]
    details = [event.after["factor"] for event in AuditEvent.objects.filter(
        action=SECOND_FACTOR_ADDED).order_by("pk")]
    assert details == [factors.APP, factors.PASSKEY]
    assert [message.subject for message in mail.outbox] == [
        "A second factor was added to your Echo Memory account"] * 2


def test_turning_a_factor_off_signs_out_the_other_sessions_and_is_told(
        alice, django_capture_on_commit_callbacks):
    user = _owner_with_email(alice)
    app_on(user)
    here = signed_in_elsewhere(user)
    phone = signed_in_elsewhere(user, {"REMOTE_ADDR": "198.51.100.7"})
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        factors.remove_factor(user=user, kind=factors.APP, keep_session_key=here.session_key,
                              network="198.51.100.0/24")
    assert Session.objects.filter(session_key=here.session_key).exists()
    assert not Session.objects.filter(session_key=phone.session_key).exists()
    assert list(SignedInSession.objects.filter(user=user).values_list(
        "session_key", flat=True)) == [here.session_key]
    assert _actions(user)[-1] == SECOND_FACTOR_REMOVED
    removed, = mail.outbox
    assert removed.subject == "A second factor was removed from your Echo Memory account"
    assert "198.51.100.0/24" in removed.body


def test_a_refused_removal_signs_no_one_out(alice):
    """The account requires a factor and this is the last one: nothing changes at all."""
    user = alice.user
    app_on(user)
    set_factor_required(principal=alice.principal, actor_role="owner", user=user,
                        required=True)
    phone = signed_in_elsewhere(user)
    with pytest.raises(ValidationFailed):
        factors.remove_factor(user=user, kind=factors.APP, keep_session_key=None)
    assert Session.objects.filter(session_key=phone.session_key).exists()
    assert factors.has_factor(user=user)
    assert SECOND_FACTOR_REMOVED not in _actions(user)


def test_an_app_code_or_a_recovery_code_confirms_its_you(client, alice, bob):
    user = alice.user
    setup = factors.totp_begin(user=user)
    _, codes = factors.totp_confirm(user=user, code=app_code(setup.secret))
    code_verifier = reauth.VERIFIERS["code"]
    assert code_verifier.applies(user) and not code_verifier.applies(bob.user)

    # Signed in with both steps, then the last check grows old.
    client.post("/login/", {"username": "alice", "password": "pw-alice"})
    assert client.post("/login/second-factor/", {"code": codes[0]})["Location"] == "/dashboard/"
    session = client.session
    session[reauth.IDENTITY_CHECKED_AT] = int(time.time()) - 3600
    session.save()
    assert client.get("/keys/new/")["Location"].startswith("/confirm/")
    page = client.get("/confirm/?next=/keys/new/").content.decode()
    assert 'name="code"' in page and 'name="password"' in page
    confirmed = client.post("/confirm/", {"code": codes[1], "next": "/keys/new/"})
    assert confirmed["Location"] == "/keys/new/"
    assert client.get("/keys/new/").status_code == 200
    # The recovery code is used up: it confirms nothing a second time, and a wrong code
    # is an error next to its field (django-otp then slows the next tries down).
    session = client.session
    session[reauth.IDENTITY_CHECKED_AT] = int(time.time()) - 3600
    session.save()
    again = client.post("/confirm/", {"code": codes[1], "next": "/keys/new/"})
    assert again.status_code == 200 and "is not right" in again.content.decode()
    assert client.get("/keys/new/")["Location"].startswith("/confirm/")
