"""An owner invites a second person by email; they join through the link as a member, and
cannot revoke the owner's key, neither from the page nor by posting to it."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from accounts.models import ApiKey
from tests.factories import signed_up


@pytest.mark.django_db(transaction=True)
def test_owner_invites_a_member_who_joins_and_cannot_revoke_the_owners_key(
        live_server, page, visits):
    ada = signed_up("ada@example.com")
    account, key = ada.account, ada.key

    visits.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    visits.click("link", "Team")
    page.get_by_label("Email").fill("grace@example.com")
    page.get_by_label("Role").select_option("member")
    visits.click("button", "Send invitation")
    assert "Invitation sent to grace@example.com" in page.get_by_role("status").inner_text()
    assert page.get_by_role("link", name="Revoke invitation to grace@example.com").is_visible()
    # The live server runs in this process, so the test mail backend's outbox has the email.
    link = re.search(r"http://\S+/invitations/[\w-]+/", mail.outbox[-1].body)[0]
    # The page shows the same link once, with a copy button (for mail that does not arrive).
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=live_server.url)
    shown = page.get_by_role("textbox", name="Invitation link for grace@example.com")
    assert shown.input_value() == link
    button = page.get_by_role("button", name="Copy the invitation link")
    button.click()
    page.wait_for_function("b => b.textContent === 'Copied'", arg=button.element_handle())
    assert page.evaluate("navigator.clipboard.readText()") == link
    page.screenshot(path=str(visits.folder / "invitation-link-copied.png"), full_page=True)
    visits.goto(f"{live_server.url}/team/")  # a reload: listed, the link no longer shown
    assert page.get_by_role("textbox", name="Invitation link for grace@example.com").count() == 0
    assert link not in page.content()
    visits.click("button", "Sign out")

    visits.goto(link)
    assert page.get_by_role("heading", name=f"Join {account.name}").is_visible()
    page.get_by_label("Password").fill("another long passphrase 7")
    visits.click("button", "Create user and join")
    assert page.url.endswith("/dashboard/")
    assert "You joined" in page.get_by_role("status").inner_text()
    assert page.get_by_text("You are member of this account.").is_visible()
    assert page.get_by_role("heading", name=account.name).is_visible()
    assert page.get_by_role("link", name=f"Revoke em_{key.prefix}").count() == 0
    assert f"em_{key.prefix}" not in page.content()  # members see only their own keys

    visits.click("link", "Team")
    assert page.get_by_text("ada@example.com").is_visible()
    assert page.get_by_role("button", name="Send invitation").count() == 0

    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    refused = page.request.post(f"{live_server.url}/keys/{key.pk}/revoke/",
                                headers={"X-CSRFToken": csrf}, max_redirects=0)
    assert refused.status == 403
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None

    # The link worked once (fetched, not visited: the browser logs a 410 as a console error).
    again = page.request.get(link)
    assert again.status == 410 and "already used" in again.text()
