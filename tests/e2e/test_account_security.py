"""Password reset, email verification, a rate-limited sign-in and the API docs, in
Chromium under the strict Content-Security-Policy (a violation is a console error)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from web.services import sign_up


@pytest.mark.django_db(transaction=True)
def test_forgot_password_mails_a_link_that_signs_in(live_server, page, visits):
    sign_up(email="ada@example.com", password="a forgotten passphrase 1")
    mail.outbox.clear()
    visits.goto(f"{live_server.url}/login/")
    visits.click("link", "Forgot your password?")
    page.get_by_label("Email").fill("ADA@example.com")
    visits.click("button", "Send the link")
    assert page.get_by_role("heading", name="Check your email").is_visible()

    link = re.search(r"http://\S+/password-reset/\S+/", mail.outbox[-1].body)[0]
    visits.goto(link)
    page.get_by_label("New password", exact=True).fill("a remembered passphrase 2")
    page.get_by_label("New password confirmation").fill("a remembered passphrase 2")
    visits.click("button", "Set password and sign in")
    assert page.url.endswith("/dashboard/")
    assert "Your password is set" in page.get_by_role("status").inner_text()

    visits.goto(link, status=404)  # used once: not valid any more
    assert page.get_by_role("heading", name="Link not valid").is_visible()


@pytest.mark.django_db(transaction=True)
def test_an_unverified_person_is_asked_to_confirm_before_creating_keys(live_server, page,
                                                                       visits, settings):
    settings.VERIFY_EMAIL = True
    visits.goto(f"{live_server.url}/signup/")
    page.get_by_label("Email").fill("bea@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign up")
    assert page.get_by_role("heading", name="Check your email").is_visible()
    visits.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill("bea@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    assert page.get_by_text("Confirm your email: open the link").is_visible()
    visits.click("link", "New key", status=403)
    assert page.get_by_role("heading", name="Confirm your email first").is_visible()
    visits.click("button", "Send the link again")
    assert "A new link is on its way" in page.get_by_role("status").inner_text()

    visits.goto(re.search(r"http://\S+/verify-email/\S+/", mail.outbox[-1].body)[0])
    assert "bea@example.com is confirmed" in page.get_by_role("status").inner_text()
    assert not page.get_by_text("Confirm your email: open the link").is_visible()
    visits.click("link", "New key")
    assert page.get_by_role("button", name="Create key").is_visible()
    assert get_user_model().objects.filter(email="bea@example.com").exists()


@pytest.mark.django_db(transaction=True)
def test_too_many_sign_ins_get_a_page_that_says_when_to_retry(live_server, page, visits,
                                                               settings):
    settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, "login_email": "2/m"}
    visits.goto(f"{live_server.url}/login/")
    for _ in range(2):
        page.get_by_label("Email").fill("cy@example.com")
        page.get_by_label("Password").fill("guess")
        visits.click("button", "Sign in")
    assert page.get_by_role("alert").is_visible()  # wrong email or password
    page.get_by_label("Email").fill("cy@example.com")
    page.get_by_label("Password").fill("guess")
    visits.click("button", "Sign in", status=429)
    assert page.get_by_role("heading", name="Too many attempts").is_visible()
    assert re.search(r"Try again in \d+ seconds", page.get_by_role("alert").inner_text())


@pytest.mark.django_db(transaction=True)
def test_the_api_docs_run_under_their_policy(live_server, page, visits):
    visits.goto(f"{live_server.url}/api/v1/docs")
    page.get_by_role("heading", name=re.compile("Echo Memory REST API")).wait_for()
    page.locator(".opblock").first.wait_for()  # the operations, from the fetched schema
    visits.shoot()
