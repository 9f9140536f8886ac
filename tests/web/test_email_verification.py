"""With ECHO_MEMORY_VERIFY_EMAIL on, sign-up mails an expiring link; until it is opened
the person sees a banner with a resend button and cannot create API keys."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from accounts.models import ApiKey
from tests.harness import free_port
from web.models import UnverifiedEmail

LINK = re.compile(r"http://testserver(/verify-email/[^/\s]+/)")
BANNER = b"Confirm your email"


@pytest.fixture
def verifying(settings):
    settings.VERIFY_EMAIL = True


def sign_up(client, email="ada@example.com"):
    """Sign up, then sign in with the password chosen (sign-up itself signs nobody in)."""
    reply = client.post("/signup/", {"email": email, "password": "a long passphrase 42"})
    assert reply.status_code == 302 and reply["Location"] == "/signup/sent/"
    signed_in = client.post("/login/", {"username": email, "password": "a long passphrase 42"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/dashboard/"
    return get_user_model().objects.get(username=email)


def test_sign_up_mails_a_link_and_keys_wait_for_it(client, db, verifying):
    ada = sign_up(client)
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ada@example.com"]
    path = LINK.search(mail.outbox[0].body)[1]

    dashboard = client.get("/dashboard/")
    assert BANNER in dashboard.content and b'action="/verify-email/resend/"' in dashboard.content
    blocked = client.get("/keys/new/")
    assert blocked.status_code == 403 and b"Confirm your email first" in blocked.content
    assert client.post("/keys/new/", {"name": "laptop", "tool": "cursor"}).status_code == 403
    assert not ApiKey.objects.filter(holder=ada).exists()

    confirmed = client.get(path, follow=True)
    assert confirmed.redirect_chain[-1][0] == "/dashboard/"
    assert b"ada@example.com is confirmed" in confirmed.content
    assert BANNER not in confirmed.content
    assert not UnverifiedEmail.objects.filter(user=ada).exists()
    assert client.post("/keys/new/", {"name": "laptop", "tool": "cursor"},
                       follow=True).status_code == 200
    assert ApiKey.objects.filter(holder=ada).count() == 1
    assert client.get(path).status_code == 302  # opening it again is harmless


def test_resend_mails_a_fresh_link_that_works(client, db, verifying):
    sign_up(client)
    reply = client.post("/verify-email/resend/", follow=True)
    assert b"A new link is on its way to ada@example.com" in reply.content
    assert len(mail.outbox) == 2
    client.logout()  # the link works signed out too, and says so on the sign-in page
    confirmed = client.get(LINK.search(mail.outbox[1].body)[1], follow=True)
    assert confirmed.redirect_chain[-1][0] == "/login/"
    assert b"is confirmed" in confirmed.content


def test_resend_is_limited(client, db, verifying, settings):
    settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, "verify_resend_user": "1/h"}
    sign_up(client)
    assert client.post("/verify-email/resend/").status_code == 302
    assert client.post("/verify-email/resend/").status_code == 429
    assert len(mail.outbox) == 2


def test_an_expired_or_altered_link_is_not_found_and_says_what_to_do(client, db, verifying,
                                                                     settings):
    sign_up(client)
    path = LINK.search(mail.outbox[0].body)[1]
    altered = client.get(path[:-4] + "abc/")
    assert altered.status_code == 404 and b"Send the link again" in altered.content
    settings.VERIFY_EMAIL_MAX_AGE = -1
    expired = client.get(path)
    assert expired.status_code == 404 and b"has expired" in expired.content
    assert UnverifiedEmail.objects.exists()


def test_a_link_for_an_address_changed_since_is_not_valid(client, db, verifying):
    ada = sign_up(client)
    path = LINK.search(mail.outbox[0].body)[1]
    ada.email = "ada@elsewhere.example"
    ada.save()
    assert client.get(path).status_code == 404
    assert UnverifiedEmail.objects.filter(user=ada).exists()


def test_people_who_never_signed_up_with_it_on_are_not_asked(client, alice, verifying):
    client.force_login(alice.user)
    assert BANNER not in client.get("/dashboard/").content
    assert client.get("/keys/new/").status_code == 200
    assert client.post("/verify-email/resend/", follow=True).status_code == 200
    assert mail.outbox == []


def test_off_sign_up_mails_a_welcome_and_keys_are_created_at_once(client, db, settings):
    settings.VERIFY_EMAIL = False
    sign_up(client)
    assert len(mail.outbox) == 1 and "http://testserver/login/" in mail.outbox[0].body
    assert not LINK.search(mail.outbox[0].body) and not UnverifiedEmail.objects.exists()
    assert BANNER not in client.get("/dashboard/").content
    assert client.post("/keys/new/", {"name": "laptop", "tool": "cursor"},
                       follow=True).status_code == 200


def test_resend_needs_a_sign_in_and_a_post(client, db):
    assert client.post("/verify-email/resend/")["Location"].startswith("/login/")
    assert client.get("/verify-email/resend/").status_code in (302, 405)


def test_a_mail_server_that_refuses_leaves_a_clear_message_not_an_error(client, db, verifying,
                                                                        settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", free_port(), 2
    ada = sign_up(client)  # the sign-up's answer is the same as ever: it says nothing of mail
    assert UnverifiedEmail.objects.filter(user=ada).exists()
    page = client.get("/dashboard/")
    assert BANNER in page.content and b'action="/verify-email/resend/"' in page.content
    again = client.post("/verify-email/resend/", follow=True)
    assert b"could not send the confirmation email" in again.content
    assert b"alert-danger" in again.content
