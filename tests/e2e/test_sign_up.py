"""A person signs up in the browser, signs in, creates and deletes a memory, creates an API
key, sees it once, and revokes it."""

from __future__ import annotations

import pytest


@pytest.mark.django_db(transaction=True)
def test_sign_up_create_and_revoke_a_key_sign_out_and_in(live_server, page, visits):
    visits.goto(f"{live_server.url}/signup/")
    page.get_by_label("Email").fill("grace@example.com")
    page.get_by_label("Password").fill("short")
    visits.click("button", "Sign up")
    assert page.locator(".invalid-feedback").first.is_visible()  # the error is by its field

    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign up")
    # The same answer whether or not the address had an account: check the inbox, sign in.
    assert page.url.endswith("/signup/sent/")
    assert page.get_by_role("heading", name="Check your email").is_visible()
    visits.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill("grace@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    assert page.url.endswith("/dashboard/")
    assert page.get_by_role("heading", name="Memories").is_visible()
    assert page.get_by_role("code").filter(has_text="default").first.is_visible()

    visits.click("link", "New memory")
    page.get_by_label("Name").fill("Team Notes")
    visits.click("button", "Create memory")
    assert "lowercase letters" in page.locator(".invalid-feedback").inner_text()
    page.get_by_label("Name").fill("team-notes")
    visits.click("button", "Create memory")
    assert page.get_by_text("team-notes", exact=True).is_visible()
    visits.click("link", "Delete memory team-notes")
    page.get_by_label("Type the memory's name to confirm").fill("team-notes")
    visits.click("button", "Delete memory")
    assert "Memory team-notes is deleted" in page.get_by_role("status").inner_text()

    visits.click("link", "New key")
    page.get_by_label("Name").fill("laptop")
    page.get_by_label("Tool").fill("claude-code")
    visits.click("button", "Create key")
    secret = page.get_by_label("API key", exact=True).input_value()
    assert secret.startswith("em_") and len(secret) == 59
    visits.click("link", "Done")
    assert secret not in page.content() and secret[:16] in page.content()

    visits.click("link", f"Revoke {secret[:15]}")
    visits.click("button", "Revoke key")
    assert page.get_by_role("status").is_visible()
    assert "No API keys yet" in page.content()  # it was the only key

    visits.click("button", "Sign out")
    page.get_by_label("Email").fill("Grace@Example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    assert page.url.endswith("/dashboard/")
