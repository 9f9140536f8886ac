"""Secret redaction in Chromium: the owner tries a pattern on a sample before saving it,
sees a risky pattern refused next to its field, saves, and a member then reads the same
settings without a way to change them."""

from __future__ import annotations

import pytest

from accounts.models import Account, Membership
from tests.factories import make_email_user
from web.services import sign_up

SECRET = "ghp_" + "x7Kq2Lm9Pz4Rt8Vw1Yb5Nc3Dh6Fj0Gs2Aq"


def sign_in(visits, page, url: str, email: str) -> None:
    visits.goto(f"{url}/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")


@pytest.mark.django_db(transaction=True)
def test_owner_previews_saves_patterns_and_a_member_reads_them(live_server, page, visits):
    _, account = sign_up(email="ada@example.com", password="a long passphrase 42")
    member = make_email_user("bob@example.com")
    Membership.objects.create(user=member, account=account, role=Membership.Role.MEMBER)

    sign_in(visits, page, live_server.url, "ada@example.com")
    visits.click("link", "Settings")
    visits.click("link", "Secret redaction")
    assert page.get_by_role("heading", name="Secret redaction").is_visible()
    assert page.get_by_role("switch", name="Redact secrets in what agents write").is_checked()

    page.get_by_label("Your own patterns").fill("(a+)+b")
    visits.click("button", "Save settings")
    error = page.locator(".invalid-feedback")
    assert "could take minutes on one long text" in error.inner_text()
    assert "possessive quantifier" in error.inner_text()
    assert Account.objects.get(pk=account.pk).redaction_patterns == []

    page.get_by_label("Your own patterns").fill("ACME-[0-9]{6}")
    page.get_by_label("Sample text").fill(f"Token {SECRET} for order ACME-123456.")
    visits.click("button", "Preview")
    result = page.get_by_role("status").filter(has_text="Would be stored as")
    assert "Token [REDACTED:github-token] for order [REDACTED:custom]." in result.inner_text()
    assert "2 secrets redacted." in result.inner_text()
    assert "with unsaved settings" in result.inner_text()
    assert Account.objects.get(pk=account.pk).redaction_patterns == []

    visits.click("button", "Save settings")
    assert "with 1 pattern of your own" in page.get_by_role("status").first.inner_text()
    assert Account.objects.get(pk=account.pk).redaction_patterns == ["ACME-[0-9]{6}"]
    visits.click("button", "Sign out")

    sign_in(visits, page, live_server.url, "bob@example.com")
    visits.click("link", "Settings")
    visits.click("link", "Secret redaction")
    assert page.get_by_text("owners and admins change these settings").is_visible()
    assert page.get_by_role("button", name="Save settings").count() == 0
    assert page.get_by_role("switch").is_disabled()
    assert page.get_by_label("Your own patterns").input_value().strip() == "ACME-[0-9]{6}"
    assert not page.get_by_label("Your own patterns").is_editable()
    page.get_by_label("Sample text").fill("ACME-654321")
    visits.click("button", "Preview")
    assert "[REDACTED:custom]" in page.get_by_role("status").inner_text()
