"""Sign-up does not tell whether an email has an account: the answer is the same page, and
the same work is done before it (the password hashed once, one mail sent); the owner of
an address that has an account gets a mail with a sign-in and a password-reset link. The
password-reset request and sign-in keep the same rule."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import MD5PasswordHasher
from django.core import mail

from accounts.models import Account
from web.services import sign_up

PW = "a long passphrase 42"
ADA = "ada@example.com"


class CountingHasher(MD5PasswordHasher):
    """The tests' fast hasher, counting every hash it computes (making or checking one)."""

    calls = 0

    def encode(self, password, salt):
        CountingHasher.calls += 1
        return super().encode(password, salt)


@pytest.fixture
def hashes(settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    CountingHasher.calls = 0

    def taken() -> int:
        calls, CountingHasher.calls = CountingHasher.calls, 0
        return calls
    return taken


@pytest.fixture
def ada(db):
    return sign_up(email=ADA, password=PW)[0]


def _page(client, reply, email: str) -> str:
    """The page the answer leads to, with what differs by nature (the address typed, the
    CSRF token) taken out."""
    html = client.get(reply["Location"]).content.decode()
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    return html.replace(email, "EMAIL")


def _answer(client, email: str, password: str = "another passphrase 7"):
    reply = client.post("/signup/", {"email": email, "password": password})
    return (reply.status_code, reply.get("Location"), sorted(reply.cookies),
            _page(client, reply, email.strip().lower()))


@pytest.mark.parametrize("taken", [ADA, " ADA@Example.com", "\uff41\uff44\uff41@example.com"])
def test_an_email_with_an_account_gets_the_same_answer_as_a_new_one(client, ada, taken):
    from django.test import Client

    new = _answer(Client(), "eve@example.com")
    existing = _answer(client, taken)
    assert existing[:3] == new[:3] == (302, "/signup/sent/", ["sessionid"])
    assert existing[3].replace("ada@example.com", "EMAIL") == new[3]
    assert "Check your email" in new[3]


def test_the_owner_is_mailed_a_sign_in_and_a_reset_link_and_nothing_changes(client, ada):
    client.post("/signup/", {"email": "ADA@example.com", "password": "another passphrase 7"})
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [ADA]
    body = mail.outbox[0].body
    assert "already has an account" in " ".join(body.split())
    assert "http://testserver/login/" in body and "http://testserver/password-reset/" in body
    ada.refresh_from_db()
    assert ada.check_password(PW) and not ada.check_password("another passphrase 7")
    assert get_user_model().objects.count() == 1 and Account.objects.count() == 1
    assert "_auth_user_id" not in client.session


def test_a_new_account_is_mailed_how_to_sign_in(client, db):
    client.post("/signup/", {"email": "Eve@Example.com", "password": PW})
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["eve@example.com"]
    assert "is ready" in mail.outbox[0].body and "http://testserver/login/" in mail.outbox[0].body
    assert "_auth_user_id" not in client.session  # signed in by nothing but a sign-in


def test_with_verification_on_the_new_account_gets_the_link_and_the_owner_the_reminder(
        client, ada, settings):
    settings.VERIFY_EMAIL = True
    client.post("/signup/", {"email": "eve@example.com", "password": PW})
    client.post("/signup/", {"email": ADA, "password": PW})
    assert [m.subject for m in mail.outbox] == ["Confirm your email for Echo Memory",
                                                "You already have an Echo Memory account"]
    assert "/verify-email/" in mail.outbox[0].body and "/verify-email/" not in mail.outbox[1].body


def test_both_answers_do_the_same_slow_work(client, ada, hashes):
    """Not a timing: the work that takes the time. The password is hashed exactly once and
    one mail is sent, whichever answer it is, before the page is answered."""
    work = {}
    for email in (ADA, "eve@example.com"):
        mail.outbox.clear()
        client.post("/signup/", {"email": email, "password": "another passphrase 7"})
        work[email] = (hashes(), len(mail.outbox))
    assert work[ADA] == work["eve@example.com"] == (1, 1)


def test_sign_in_hashes_once_for_an_unknown_name_as_for_a_wrong_password(client, ada, hashes):
    for name in (ADA, "nobody@example.com", "\uff41\uff44\uff41@example.com"):
        reply = client.post("/login/", {"username": name, "password": "wrong passphrase"})
        assert reply.status_code == 200 and hashes() == 1, name


def test_a_reset_for_an_unknown_address_does_the_same_work_as_for_a_known_one(client, ada):
    answers = []
    for email in (ADA, "nobody@example.com"):
        mail.outbox.clear()
        reply = client.post("/password-reset/", {"email": email})
        answers.append((reply.status_code, reply["Location"], len(mail.outbox),
                        mail.outbox[0].to == [email]))
    assert answers[0] == answers[1] == (302, "/password-reset/sent/", 1, True)


def test_a_bad_sign_up_is_still_answered_by_its_fields(client, ada):
    reply = client.post("/signup/", {"email": "not an email", "password": PW})
    assert reply.status_code == 200 and "valid email" in reply.content.decode()
    assert mail.outbox == []


def test_an_email_too_long_once_folded_is_refused_by_its_field(client, db):
    # U+FDFA is one character that NFKC makes 18: the stored name would not fit.
    reply = client.post("/signup/", {"email": "a" * 100 + "\ufdfa" * 3 + "@example.com",
                                     "password": PW})
    assert reply.status_code == 200 and reply.context["form"].errors["email"]
    assert not get_user_model().objects.exists()
