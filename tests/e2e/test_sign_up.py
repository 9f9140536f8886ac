"""A person signs up in the browser and lands on a dashboard with their default memory."""

from __future__ import annotations

import pytest


@pytest.mark.django_db(transaction=True)
def test_sign_up_sign_out_and_sign_in_again(live_server, page, visits):
    visits.goto(f"{live_server.url}/signup/")
    page.get_by_label("Email").fill("grace@example.com")
    page.get_by_label("Password").fill("short")
    with visits.navigation():
        page.get_by_role("button", name="Sign up").click()
    assert page.locator(".invalid-feedback").first.is_visible()  # the error is by its field

    page.get_by_label("Password").fill("a long passphrase 42")
    with visits.navigation():
        page.get_by_role("button", name="Sign up").click()
    assert page.url.endswith("/dashboard/")
    assert page.get_by_role("heading", name="Memories").is_visible()
    assert page.get_by_text("default", exact=True).is_visible()

    with visits.navigation():
        page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Username").fill("grace@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    with visits.navigation():
        page.get_by_role("button", name="Sign in").click()
    assert page.url.endswith("/dashboard/")
