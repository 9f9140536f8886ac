"""A person signs up in the browser, creates and deletes a memory, creates an API key,
sees it once, and revokes it."""

from __future__ import annotations

import pytest


@pytest.mark.django_db(transaction=True)
def test_sign_up_create_and_revoke_a_key_sign_out_and_in(live_server, page, visits):
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
        page.get_by_role("link", name="New memory").click()
    page.get_by_label("Name").fill("Team Notes")
    with visits.navigation():
        page.get_by_role("button", name="Create memory").click()
    assert "lowercase letters" in page.locator(".invalid-feedback").inner_text()
    page.get_by_label("Name").fill("team-notes")
    with visits.navigation():
        page.get_by_role("button", name="Create memory").click()
    assert page.get_by_text("team-notes", exact=True).is_visible()
    with visits.navigation():
        page.get_by_role("link", name="Delete memory team-notes").click()
    page.get_by_label("Type the memory's name to confirm").fill("team-notes")
    with visits.navigation():
        page.get_by_role("button", name="Delete memory").click()
    assert "Memory team-notes is deleted" in page.get_by_role("status").inner_text()

    with visits.navigation():
        page.get_by_role("link", name="New key").click()
    page.get_by_label("Name").fill("laptop")
    page.get_by_label("Tool").fill("claude-code")
    with visits.navigation():
        page.get_by_role("button", name="Create key").click()
    secret = page.get_by_label("API key").input_value()
    assert secret.startswith("em_") and len(secret) == 59
    with visits.navigation():
        page.get_by_role("link", name="Done").click()
    assert secret not in page.content() and secret[:16] in page.content()

    with visits.navigation():
        page.get_by_role("link", name=f"Revoke {secret[:15]}").click()
    with visits.navigation():
        page.get_by_role("button", name="Revoke key").click()
    assert page.get_by_role("status").is_visible()
    assert "No API keys yet" in page.content()  # it was the only key

    with visits.navigation():
        page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Email").fill("Grace@Example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    with visits.navigation():
        page.get_by_role("button", name="Sign in").click()
    assert page.url.endswith("/dashboard/")
