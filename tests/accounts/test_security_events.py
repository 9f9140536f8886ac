"""Security events land in the audit log of each account the person belongs to and in a
mail to them that says what happened, when, from where, and what to do if it was not them:
a sign-in from a new network, a password change (which also signs out every other
session), a key created, a second factor added or removed."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import transaction
from django.test import Client

from accounts.models import ApiKey, Membership, SignedInSession
from accounts.security_events import (
    KEY_CREATED,
    KINDS,
    NEW_NETWORK_SIGN_IN,
    PASSWORD_CHANGED,
    SECOND_FACTOR_ADDED,
    SECOND_FACTOR_REMOVED,
    record_security_event,
)
from audit.models import AuditEvent
from audit.verify import audit_verify
from memories.catalog.new_accounts import account_create
from tests.factories import PASSPHRASE, make_email_user, signed_in_elsewhere

LINK = re.compile(r"http://testserver(/password-reset/[^/\s]+/[^/\s]+/)")
HOME = {"REMOTE_ADDR": "203.0.113.9"}


@pytest.fixture
def ada(db):
    """Owner of one account and member of another: her events go to both."""
    user = make_email_user("ada@example.com")
    account_create(owner=user, name="Ada's lab")
    other = account_create(owner=make_email_user("grace@example.com"), name="Grace's team")
    Membership.objects.create(user=user, account=other, role=Membership.Role.MEMBER)
    return user


def _events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("account_id"))


def _sign_in(user, *, commits, **meta) -> Client:
    browser = Client()
    with commits(execute=True):
        reply = browser.post("/login/", {"username": user.username, "password": PASSPHRASE},
                             **meta)
    assert reply.status_code == 302
    return browser


def _mail_says(message, *phrases: str) -> None:
    body = " ".join(message.body.split())
    for phrase in phrases:
        assert phrase in body, phrase
    assert "If it was not you" in body and "/password-reset/" in body
    assert "/account/sessions/" in body and "/audit/" in body


def test_a_sign_in_from_a_new_network_is_audited_in_each_account_and_mailed(
        ada, django_capture_on_commit_callbacks):
    _sign_in(ada, commits=django_capture_on_commit_callbacks, **HOME)
    _sign_in(ada, commits=django_capture_on_commit_callbacks, REMOTE_ADDR="203.0.113.200")
    assert _events(NEW_NETWORK_SIGN_IN) == [] and mail.outbox == []  # first, same block
    _sign_in(ada, commits=django_capture_on_commit_callbacks, REMOTE_ADDR="198.51.100.7",
             HTTP_USER_AGENT="Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0")
    events = _events(NEW_NETWORK_SIGN_IN)
    assert [e.account.name for e in events] == ["Ada's lab", "Grace's team"]
    assert events[0].holder_id == ada.pk
    assert events[0].after == {"user": "ada@example.com", "network": "198.51.100.0/24",
                               "device": "Firefox on Linux"}
    assert all(audit_verify(e.account_id)[0] for e in events)
    sent, = mail.outbox
    assert sent.to == ["ada@example.com"]
    assert sent.subject == "New sign-in to your Echo Memory account"
    _mail_says(sent, "from a network it has not been signed in from before",
               "From: the network 198.51.100.0/24", "Device: Firefox on Linux", "UTC")
    _sign_in(ada, commits=django_capture_on_commit_callbacks, REMOTE_ADDR="198.51.100.8")
    assert len(mail.outbox) == 1  # known now


def test_a_new_password_from_a_reset_link_signs_out_the_others_and_is_told(
        ada, django_capture_on_commit_callbacks):
    phone = signed_in_elsewhere(ada)
    browser = Client()
    browser.post("/password-reset/", {"email": "ada@example.com"})
    path = LINK.search(mail.outbox[-1].body)[1]
    mail.outbox.clear()
    set_url = browser.get(path, follow=True, **HOME).redirect_chain[-1][0]
    with django_capture_on_commit_callbacks(execute=True):
        done = browser.post(set_url, {"new_password1": "another passphrase 9",
                                      "new_password2": "another passphrase 9"},
                            follow=True, **HOME)
    assert "Any other session of yours is signed out." in done.content.decode()
    assert Client().get("/dashboard/").status_code == 302
    other = Client()
    other.cookies["sessionid"] = phone.session_key
    assert other.get("/dashboard/")["Location"].startswith("/login/")
    assert not SignedInSession.objects.filter(pk=phone.pk).exists()
    assert browser.get("/dashboard/").status_code == 200  # the one that changed it stays
    events = _events(PASSWORD_CHANGED)
    assert len(events) == 2 and events[0].after["network"] == "203.0.113.0/24"
    assert events[0].after["other sessions signed out"] == 1
    changed = [m for m in mail.outbox if m.subject == KINDS[PASSWORD_CHANGED].subject]
    assert len(changed) == 1
    _mail_says(changed[0], "The password of your Echo Memory account was changed",
               "Every other session signed in to it was signed out",
               "Other sessions signed out: 1")


def test_the_admins_own_password_change_signs_out_the_operators_other_sessions(
        ada, django_capture_on_commit_callbacks):
    ada.is_staff = ada.is_superuser = True
    ada.save()
    admin = Client()
    admin.force_login(ada)
    phone = signed_in_elsewhere(ada)
    with django_capture_on_commit_callbacks(execute=True):
        done = admin.post("/admin/password_change/", {
            "old_password": PASSPHRASE, "new_password1": "another passphrase 9",
            "new_password2": "another passphrase 9"})
    assert done.status_code == 302
    assert not SignedInSession.objects.filter(pk=phone.pk).exists()
    assert admin.get("/admin/").status_code == 200
    assert len(_events(PASSWORD_CHANGED)) == 2
    assert [m.subject for m in mail.outbox] == [KINDS[PASSWORD_CHANGED].subject]


def test_an_operator_setting_someones_password_signs_all_their_sessions_out(
        ada, staff_client, django_capture_on_commit_callbacks):
    signed_in_elsewhere(ada)
    with django_capture_on_commit_callbacks(execute=True):
        done = staff_client.post(f"/admin/auth/user/{ada.pk}/password/", {
            "password1": "another passphrase 9", "password2": "another passphrase 9",
            "usable_password": "true"})
    assert done.status_code == 302
    assert not SignedInSession.objects.filter(user=ada).exists()
    assert staff_client.get("/admin/").status_code == 200
    assert mail.outbox[-1].to == ["ada@example.com"]
    assert get_user_model().objects.get(pk=ada.pk).check_password("another passphrase 9")


def test_a_new_key_is_mailed_to_its_holder_and_audited_once(
        alice, django_capture_on_commit_callbacks):
    alice.user.email = "alice@example.com"
    alice.user.save()
    browser = Client()
    browser.force_login(alice.user)
    with django_capture_on_commit_callbacks(execute=True):
        browser.post("/keys/new/", {"name": "phone", "tool": "cursor"})
    key = ApiKey.objects.get(name="phone")
    created = AuditEvent.objects.filter(action=KEY_CREATED, object_id=str(key.pk))
    assert created.count() == 1 and created.get().holder_id == alice.user.pk
    sent, = mail.outbox
    assert sent.to == ["alice@example.com"]
    assert sent.subject == "A new API key on your Echo Memory account"
    _mail_says(sent, "An API key was created for you", f"Key: phone (em_{key.prefix}_…)")


@pytest.mark.parametrize(("kind", "says"), [
    (SECOND_FACTOR_ADDED, "was added to your Echo Memory account"),
    (SECOND_FACTOR_REMOVED, "was removed from your Echo Memory account"),
])
def test_a_second_factor_added_or_removed_is_audited_and_mailed(
        ada, django_capture_on_commit_callbacks, kind, says):
    with django_capture_on_commit_callbacks(execute=True):
        record_security_event(user=ada, kind=kind, network="203.0.113.0/24",
                              detail={"factor": "authenticator app"})
    events = _events(kind)
    assert len(events) == 2 and events[0].after["factor"] == "authenticator app"
    sent, = mail.outbox
    _mail_says(sent, says, "From: the network 203.0.113.0/24", "Factor: authenticator app")


def test_an_event_about_one_account_is_in_that_accounts_log_only(
        ada, django_capture_on_commit_callbacks):
    lab = Membership.objects.get(user=ada, role=Membership.Role.OWNER).account
    with django_capture_on_commit_callbacks(execute=True):
        record_security_event(user=ada, kind=SECOND_FACTOR_ADDED, account_id=lab.pk)
    assert [e.account_id for e in _events(SECOND_FACTOR_ADDED)] == [lab.pk]
    assert "From: not known" in mail.outbox[0].body


def test_a_person_without_an_email_is_audited_but_not_mailed(
        alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        record_security_event(user=alice.user, kind=PASSWORD_CHANGED)
    assert len(_events(PASSWORD_CHANGED)) == 1 and mail.outbox == []


def test_nothing_is_mailed_when_the_change_is_rolled_back(ada,
                                                          django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        record_security_event(user=ada, kind=PASSWORD_CHANGED)
        transaction.set_rollback(True)
    assert _events(PASSWORD_CHANGED) == [] and mail.outbox == []


def test_changing_the_password_on_its_page_keeps_this_session_and_ends_the_others(
        ada, django_capture_on_commit_callbacks):
    browser = Client()
    with django_capture_on_commit_callbacks(execute=True):
        browser.post("/login/", {"username": "ada@example.com", "password": PASSPHRASE}, **HOME)
    listed = SignedInSession.objects.get(user=ada)
    phone = signed_in_elsewhere(ada)
    wrong = browser.post("/account/password/", {
        "old_password": "not it", "new_password1": "another passphrase 9",
        "new_password2": "another passphrase 9"})
    assert wrong.status_code == 200 and "old_password" in wrong.context["form"].errors
    with django_capture_on_commit_callbacks(execute=True):
        done = browser.post("/account/password/", {
            "old_password": PASSPHRASE, "new_password1": "another passphrase 9",
            "new_password2": "another passphrase 9"}, follow=True, **HOME)
    page = done.content.decode()
    assert done.redirect_chain[-1][0] == "/account/sessions/"
    assert "Your password is changed. 1 other session signed out." in page
    assert page.count("this session") == 1 and "Safari on iPhone" not in page
    kept = SignedInSession.objects.get(user=ada)  # the same row, under the session's new key
    assert kept.pk == listed.pk and kept.signed_in_at == listed.signed_in_at
    assert not SignedInSession.objects.filter(pk=phone.pk).exists()
    assert len(_events(PASSWORD_CHANGED)) == 2
    assert mail.outbox[-1].subject == KINDS[PASSWORD_CHANGED].subject
