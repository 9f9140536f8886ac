"""Two-factor sign-in in Chromium under the strict CSP: the authenticator app set up from
the page's secret, then signing in with its code and with a recovery code (once); a passkey
made and used with Chromium's virtual authenticator (the box at http://localhost:PORT, its
relying party "localhost"); an owner requiring a second factor, and a member sent to set
one up."""

from __future__ import annotations

import pytest

from accounts import second_factors
from accounts.models import Membership
from tests.factories import PASSPHRASE, make_email_user, signed_up
from tests.second_factor_codes import app_code


def sign_in(page, visits, base: str, email: str) -> None:
    visits.goto(f"{base}/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSPHRASE)
    visits.click("button", "Sign in")


def sign_out(visits) -> None:
    visits.click("button", "Sign out")


@pytest.mark.django_db(transaction=True)
def test_the_app_and_a_recovery_code_sign_in(live_server, page, visits):
    signed_up("ada@example.com")
    sign_in(page, visits, live_server.url, "ada@example.com")
    visits.click("link", "Settings")
    visits.click("link", "Account security")
    visits.click("link", "Set up an app")
    secret = page.locator("#totp-secret").input_value()
    assert page.get_by_label("QR code of the secret").locator("svg").is_visible()
    wrong = "000000" if app_code(secret) != "000000" else "111111"
    page.get_by_label("Code", exact=True).fill(wrong)
    visits.click("button", "Turn on")
    assert "that code is not the one the app shows now" in page.locator(
        ".invalid-feedback").inner_text()
    page.get_by_label("Code", exact=True).fill(app_code(secret))
    visits.click("button", "Turn on")
    assert page.get_by_role("heading", name="Your recovery codes").is_visible()
    codes = page.locator(".recovery-code").all_inner_texts()
    assert len(codes) == 10
    visits.click("link", "I have saved them")
    assert page.get_by_text("10 unused codes left").is_visible()
    sign_out(visits)

    sign_in(page, visits, live_server.url, "ada@example.com")
    assert "/login/second-factor/" in page.url
    assert page.get_by_role("heading", name="One more step").is_visible()
    page.get_by_label("Code", exact=True).fill(app_code(secret, steps_ahead=1))
    visits.click("button", "Verify")
    assert page.url.endswith("/dashboard/")
    sign_out(visits)

    sign_in(page, visits, live_server.url, "ada@example.com")
    page.get_by_text("Use a recovery code").click()
    page.get_by_label("Code", exact=True).fill(codes[0])
    visits.click("button", "Verify")
    assert page.url.endswith("/dashboard/")
    sign_out(visits)

    sign_in(page, visits, live_server.url, "ada@example.com")
    page.get_by_label("Code", exact=True).fill(codes[0])
    visits.click("button", "Verify")
    assert "that code does not match" in page.locator(".invalid-feedback").inner_text()
    visits.goto(f"{live_server.url}/dashboard/")  # still owed: back to the second step
    assert "/login/second-factor/?next=%2Fdashboard%2F" in page.url


@pytest.mark.django_db(transaction=True)
def test_a_passkey_is_added_and_signs_in(live_server, page, visits):
    assert live_server.url.startswith("http://localhost:")  # a passkey needs a host name
    signed_up("bea@example.com")
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True}})
    sign_in(page, visits, live_server.url, "bea@example.com")
    visits.goto(f"{live_server.url}/account/security/")
    page.get_by_label("Passkey name").fill("Test laptop")
    visits.click("button", "Add a passkey")
    assert page.get_by_text("The passkey is called Test laptop.").is_visible()
    # The first factor brings the recovery codes, shown once.
    assert page.locator(".recovery-code").count() == 10
    visits.click("link", "I have saved them")
    assert page.get_by_text("Test laptop", exact=True).is_visible()
    assert page.get_by_text("10 unused codes left").is_visible()
    sign_out(visits)

    sign_in(page, visits, live_server.url, "bea@example.com")
    assert page.get_by_role("heading", name="One more step").is_visible()
    visits.click("button", "Use a passkey")
    assert page.url.endswith("/dashboard/")
    visits.goto(f"{live_server.url}/account/security/")
    assert page.get_by_text("last used").is_visible()


@pytest.mark.django_db(transaction=True)
def test_an_owner_requires_a_second_factor_and_a_member_sets_one_up(live_server, page,
                                                                    visits):
    cleo = signed_up("cleo@example.com")
    setup = second_factors.totp_begin(user=cleo.user)
    second_factors.totp_confirm(user=cleo.user, code=app_code(setup.secret))
    dan = make_email_user("dan@example.com")
    Membership.objects.create(user=dan, account=cleo.account, role=Membership.Role.MEMBER)

    sign_in(page, visits, live_server.url, "cleo@example.com")
    page.get_by_label("Code", exact=True).fill(app_code(setup.secret, steps_ahead=1))
    visits.click("button", "Verify")
    visits.goto(f"{live_server.url}/account/security/")
    visits.click("button", "Require a second factor")
    assert page.get_by_text("Every member now needs a second factor").is_visible()
    sign_out(visits)

    sign_in(page, visits, live_server.url, "dan@example.com")
    assert "/account/security/" in page.url
    assert page.get_by_text("An account you belong to requires a second factor").is_visible()
    visits.click("link", "Dashboard")  # not yet: back to set-up
    assert "/account/security/?next=%2Fdashboard%2F" in page.url
    visits.click("link", "Set up an app")
    page.get_by_label("Code", exact=True).fill(app_code(page.locator("#totp-secret").input_value()))
    visits.click("button", "Turn on")
    visits.click("link", "I have saved them")
    visits.click("link", "Dashboard")
    assert page.url.endswith("/dashboard/")
