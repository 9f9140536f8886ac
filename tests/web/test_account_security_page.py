"""The account security page: the app set up from the QR code's secret and confirmed by a
code (errors next to the field), recovery codes shown once and made anew, passkeys named
and removed by their owner only (another's id is a 404), and the owner's rule that sends
members without a factor to set one up."""

from __future__ import annotations

import re

import pytest
from django_otp_webauthn.models import WebAuthnCredential

from accounts import second_factors as factors
from accounts.models import Account
from audit.models import AuditEvent
from tests.second_factor_codes import app_code

PAGE = "/account/security/"


def secret_on(page: str) -> str:
    return re.search(r'id="totp-secret" value="([A-Z2-7]+)"', page)[1]


def passkey_for(user, name: str = "") -> WebAuthnCredential:
    return factors.add_passkey(user=user, create=lambda: WebAuthnCredential.objects.create(
        user=user, credential_id=f"cred-{user.pk}-{name}".encode(), public_key=b"k",
        sign_count=0, transports=[], aaguid="00000000-0000-0000-0000-000000000000"))


def verified(client, device) -> None:
    """This session passed `device` (a passkey's browser check is the e2e tests' part)."""
    session = client.session
    session["otp_device_id"] = device.persistent_id
    session.save()


def test_the_page_needs_a_sign_in_and_is_linked_from_the_settings(client, alice):
    assert client.get(PAGE)["Location"].startswith("/login/")
    client.force_login(alice.user)
    assert f'href="{PAGE}"' in client.get("/account/").content.decode()
    page = client.get(PAGE).content.decode()
    assert "Set up an app" in page and 'id="passkey-registration-placeholder"' in page
    assert "otp_webauthn_register.js" in page and "<script>" not in page


def test_the_app_is_set_up_with_a_code_and_the_codes_are_shown_once(client, alice):
    client.force_login(alice.user)
    setup = client.get("/account/security/app/").content.decode()
    assert "<svg" in setup and 'name="code"' in setup
    secret = secret_on(setup)
    wrong = client.post("/account/security/app/", {"code": "abc;def"})
    assert wrong.status_code == 200 and "that is not a code" in wrong.content.decode()
    assert 'class="form-control is-invalid"' in wrong.content.decode()
    assert not factors.has_factor(user=alice.user)
    done = client.post("/account/security/app/", {"code": app_code(secret)})
    assert done["Location"] == "/account/security/recovery-codes/"
    shown = client.get(done["Location"]).content.decode()
    codes = re.findall(r'<li class="col recovery-code">([a-z2-7]{8})</li>', shown)
    assert len(codes) == 10 and "only time these codes are shown" in shown
    assert client.get("/account/security/recovery-codes/")["Location"] == PAGE
    page = client.get(PAGE).content.decode()
    assert "10 unused codes left" in page and "Remove the app" in page
    # The session that set it up counts as verified: it goes on without a second step.
    assert client.get("/dashboard/").status_code == 200
    again = client.post("/account/security/recovery-codes/")
    assert again["Location"] == "/account/security/recovery-codes/"
    fresh = re.findall(r'recovery-code">([a-z2-7]{8})<', client.get(again["Location"])
                       .content.decode())
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    assert client.get("/account/security/app/")["Location"] == PAGE  # one app at a time
    assert client.post("/account/security/app/remove/")["Location"] == PAGE
    assert not factors.has_factor(user=alice.user)


def test_passkeys_are_named_and_removed_and_anothers_id_is_a_404(client, alice, charlie):
    mine, theirs = passkey_for(alice.user, "a"), passkey_for(charlie.user, "c")
    client.force_login(alice.user)
    verified(client, mine)
    named = client.post("/account/security/passkeys/name/", {"passkey": mine.pk,
                                                               "name": "work laptop"})
    # A passkey as the first factor: its recovery codes are shown once, now.
    assert named["Location"] == "/account/security/recovery-codes/"
    assert len(re.findall(r'recovery-code">', client.get(named["Location"])
                          .content.decode())) == 10
    assert "work laptop" in client.get(PAGE).content.decode()
    unnamed = client.post("/account/security/passkeys/name/", {"passkey": mine.pk})
    assert unnamed["Location"] == PAGE  # no name typed: it keeps its own
    assert "work laptop" in client.get(PAGE).content.decode()
    too_long = client.post("/account/security/passkeys/name/", {"passkey": mine.pk,
                                                                 "name": "x" * 65})
    assert too_long.status_code == 400 and "at most 64 characters" in \
        too_long.content.decode()
    blank = client.post("/account/security/passkeys/name/", {"passkey": mine.pk,
                                                              "name": "\x00"})
    assert blank.status_code == 400
    for path, fields in (("name", {"name": "mine"}), ("remove", {})):
        for hostile in (theirs.pk, "9" * 30, "x", "1\x00"):
            answer = client.post(f"/account/security/passkeys/{path}/",
                                 {"passkey": hostile, **fields})
            assert answer.status_code in (400, 404), (path, hostile)
        assert client.post(f"/account/security/passkeys/{path}/",
                           {"passkey": theirs.pk, **fields}).status_code == 404
    assert WebAuthnCredential.objects.get(pk=theirs.pk).name == "Passkey 1"
    missing = client.post("/account/security/passkeys/remove/", {})
    assert missing.status_code == 400 and "Say which passkey" in missing.content.decode()
    assert client.post("/account/security/passkeys/remove/",
                       {"passkey": mine.pk})["Location"] == PAGE
    assert not WebAuthnCredential.objects.filter(pk=mine.pk).exists()


@pytest.mark.parametrize("method", ["get", "put"])
def test_the_action_routes_take_only_posts(client, alice, method):
    client.force_login(alice.user)
    for path in ("passkeys/name/", "passkeys/remove/", "app/remove/", "requirement/"):
        assert getattr(client, method)(PAGE + path).status_code == 405


def test_the_owner_requires_a_factor_and_a_member_without_one_is_sent_to_set_it_up(
        client, alice, bob):
    client.force_login(alice.user)
    refused = client.post("/account/security/requirement/", {"required": "on"})
    assert refused.status_code == 400
    assert "you have no second factor yourself" in refused.content.decode()
    assert not Account.objects.get(pk=alice.account.pk).require_second_factor
    assert client.post("/account/security/requirement/",
                       {"required": "maybe"}).status_code == 400
    setup = factors.totp_begin(user=alice.user)
    factors.totp_confirm(user=alice.user, code=app_code(setup.secret))
    client.force_login(alice.user)  # signed in anew: the second step first
    client.post("/login/second-factor/", {"code": app_code(setup.secret, steps_ahead=1)})
    assert client.post("/account/security/requirement/",
                       {"required": "on"})["Location"] == PAGE
    assert AuditEvent.objects.filter(action="account.second_factor_required").exists()

    client.force_login(bob.user)
    assert client.post("/account/security/requirement/", {"required": "off"}) \
        .status_code == 403
    for path in ("/dashboard/", "/audit/", "/team/", "/memories/default/"):
        sent = client.get(path)
        assert sent["Location"] == f"{PAGE}?next={path.replace('/', '%2F')}", path
    page = client.get(PAGE).content.decode()
    assert "requires a second factor" in page
    bob_setup = client.get("/account/security/app/").content.decode()
    client.post("/account/security/app/", {"code": app_code(secret_on(bob_setup))})
    assert client.get("/dashboard/").status_code == 200


def test_a_member_signed_in_before_the_rule_meets_it_at_the_next_look(client, alice, bob):
    from web.second_factor_gate import OWED, RECHECK_SECONDS

    client.force_login(bob.user)
    assert client.get("/dashboard/").status_code == 200
    Account.objects.filter(pk=alice.account.pk).update(require_second_factor=True)
    assert client.get("/dashboard/").status_code == 200  # what the session owes is kept
    session = client.session
    session[OWED] = {**session[OWED], "at": session[OWED]["at"] - RECHECK_SECONDS - 1}
    session.save()
    assert client.get("/dashboard/")["Location"] == f"{PAGE}?next=%2Fdashboard%2F"
    # The dashboard's polling: the whole page goes there (not the page into the list), and
    # comes back to the dashboard, not to the fragment.
    polled = client.get("/dashboard/first-run/", HTTP_HX_REQUEST="true",
                        HTTP_HX_CURRENT_URL="http://testserver/dashboard/")
    assert polled["HX-Redirect"] == f"{PAGE}?next=%2Fdashboard%2F" and polled.content == b""
    elsewhere = client.get("/dashboard/first-run/", HTTP_HX_REQUEST="true",
                           HTTP_HX_CURRENT_URL="http://testserver//evil.example/")
    assert elsewhere["HX-Redirect"] == PAGE
