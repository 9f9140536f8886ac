"""Second factors as services: the app is confirmed by a code before it counts, recovery
codes work once and are replaced whole, a passkey or the app is removed by its owner only,
the last factor stays while an account requires one, and the owner's rule is audited."""

from __future__ import annotations

import pytest
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from accounts import second_factor_policy as policy
from accounts import second_factors as factors
from accounts.models import Account, Membership
from audit.models import AuditEvent
from echomem.errors import Forbidden, NotFound, ValidationFailed
from tests.second_factor_codes import app_code


def app_on(user) -> list[str]:
    setup = factors.totp_begin(user=user)
    return factors.totp_confirm(user=user, code=app_code(setup.secret))[1]


def passkey_for(user, name: str = "") -> WebAuthnCredential:
    """A passkey row as the ceremony saves it (the browser's part is the e2e test's)."""
    made = factors.add_passkey(user=user, create=lambda: WebAuthnCredential.objects.create(
        user=user, credential_id=f"cred-{user.pk}-{name}".encode(), public_key=b"k",
        sign_count=0, transports=[], aaguid="00000000-0000-0000-0000-000000000000"))
    return factors.rename_passkey(user=user, passkey_id=made.pk, name=name) if name else made


def test_the_app_counts_only_once_a_code_confirms_it(alice):
    user = alice.user
    setup = factors.totp_begin(user=user)
    assert setup.secret and setup.uri.startswith("otpauth://totp/Echo%20Memory%3Aalice?secret=")
    assert setup.qr_svg.startswith("<svg") and "style=" not in setup.qr_svg
    assert factors.totp_begin(user=user).secret == setup.secret  # a reload keeps it
    assert not factors.has_factor(user=user) and not factors.factors_of(user=user).any
    with pytest.raises(ValidationFailed) as wrong:
        factors.totp_confirm(user=user, code="000000" if app_code(setup.secret) != "000000"
                             else "111111")
    assert wrong.value.field == "code" and "app shows now" in wrong.value.message
    _, codes = factors.totp_confirm(user=user, code=app_code(setup.secret))
    assert len(codes) == factors.RECOVERY_CODES == len(set(codes))
    assert factors.has_factor(user=user)
    assert factors.factors_of(user=user).recovery_codes_left == 10
    with pytest.raises(ValidationFailed, match="already set up"):
        factors.totp_begin(user=user)


@pytest.mark.parametrize("code", ["", "   ", "12\x0034", "x" * 40, "١٢٣٤٥٦", "12;34"])
def test_a_code_that_cannot_be_one_is_refused_by_field(alice, code):
    app_on(alice.user)
    with pytest.raises(ValidationFailed) as refused:
        factors.verify_code(user=alice.user, code=code)
    assert refused.value.field == "code" and refused.value.fix


def test_a_recovery_code_works_once_and_new_ones_replace_all(alice):
    user = alice.user
    codes = app_on(user)
    assert factors.verify_code(user=user, code=codes[0].upper()).name == "Recovery codes"
    assert factors.factors_of(user=user).recovery_codes_left == 9
    with pytest.raises(ValidationFailed, match="does not match"):
        factors.verify_code(user=user, code=codes[0])
    # A wrong code makes the next wait a moment, however right it is.
    with pytest.raises(ValidationFailed, match="too many wrong codes"):
        factors.verify_code(user=user, code=codes[1])
    fresh = factors.recovery_codes_regenerate(user=user)
    assert not set(fresh) & set(codes)
    assert factors.verify_code(user=user, code=f"{fresh[1][:4]}-{fresh[1][4:]}")
    with pytest.raises(ValidationFailed, match="does not match"):
        factors.verify_code(user=user, code=codes[2])
    assert StaticDevice.objects.filter(user=user).count() == 1


def test_the_app_code_verifies_and_is_not_taken_twice(alice):
    setup = factors.totp_begin(user=alice.user)
    factors.totp_confirm(user=alice.user, code=app_code(setup.secret))
    # The step that confirmed the app is used up; the next one signs in, once.
    later = app_code(setup.secret, steps_ahead=1)
    assert isinstance(factors.verify_code(user=alice.user, code=later), TOTPDevice)
    with pytest.raises(ValidationFailed):
        factors.verify_code(user=alice.user, code=later)


def test_recovery_codes_need_a_factor_first(alice):
    with pytest.raises(ValidationFailed) as refused:
        factors.recovery_codes_regenerate(user=alice.user)
    assert refused.value.field == "recovery_codes"


def test_passkeys_are_named_listed_and_removed_by_their_owner_only(alice, charlie):
    first = passkey_for(alice.user)
    assert first.name == "Passkey 1" and first.confirmed
    named = passkey_for(alice.user, "work laptop")
    listed = factors.factors_of(user=alice.user).passkeys
    assert [p.name for p in listed] == ["Passkey 1", "work laptop"]
    for hostile in (named.pk, str(named.pk), "9" * 30, "x", None):
        with pytest.raises(NotFound):
            factors.remove_factor(user=charlie.user, kind=factors.PASSKEY, factor_id=hostile)
        with pytest.raises(NotFound):
            factors.rename_passkey(user=charlie.user, passkey_id=hostile, name="mine")
    for bad in ("", "  ", "x" * 65, "tab\tname"):
        with pytest.raises(ValidationFailed) as refused:
            factors.rename_passkey(user=alice.user, passkey_id=named.pk, name=bad)
        assert refused.value.field == "name"
    factors.remove_factor(user=alice.user, kind=factors.PASSKEY, factor_id=first.pk)
    assert [p.name for p in factors.factors_of(user=alice.user).passkeys] == ["work laptop"]
    with pytest.raises(ValidationFailed):
        factors.remove_factor(user=alice.user, kind="sms")


def test_removing_the_last_factor_takes_the_recovery_codes(alice):
    app_on(alice.user)
    factors.remove_factor(user=alice.user, kind=factors.APP)
    assert not factors.has_factor(user=alice.user)
    assert not StaticToken.objects.filter(device__user=alice.user).exists()
    with pytest.raises(NotFound):
        factors.remove_factor(user=alice.user, kind=factors.APP)


def test_the_rule_needs_an_owner_with_a_factor_and_is_audited(alice, bob):
    with pytest.raises(Forbidden):
        policy.set_factor_required(principal=bob.principal, actor_role=Membership.Role.MEMBER,
                                   user=bob.user, required=True)
    with pytest.raises(ValidationFailed) as refused:
        policy.set_factor_required(principal=alice.principal,
                                   actor_role=Membership.Role.OWNER, user=alice.user,
                                   required=True)
    assert refused.value.field == "required" and "set up" in refused.value.fix
    assert not Account.objects.get(pk=alice.account.pk).require_second_factor
    app_on(alice.user)
    policy.set_factor_required(principal=alice.principal, actor_role=Membership.Role.OWNER,
                               user=alice.user, required=True)
    assert factors.factor_required(user=bob.user) and factors.factor_required(user=alice.user)
    event = AuditEvent.objects.get(account_id=alice.account.pk,
                                   action=policy.SECOND_FACTOR_REQUIRED)
    assert event.after == {"required": True} and event.holder_id == alice.user.pk
    # While the account requires it, alice's last factor stays.
    with pytest.raises(ValidationFailed, match="requires a second factor"):
        factors.remove_factor(user=alice.user, kind=factors.APP)
    assert factors.has_factor(user=alice.user)
    passkey_for(alice.user, "spare")
    factors.remove_factor(user=alice.user, kind=factors.APP)  # another factor remains
    assert factors.has_factor(user=alice.user)


def test_the_relying_party_is_the_public_urls_host(rf, settings):
    from accounts.passkeys import PasskeyHelper, public_url_is_an_address, relying_party_id

    settings.PUBLIC_URL = ""
    local = PasskeyHelper(rf.get("/", HTTP_HOST="localhost:8123"))
    assert relying_party_id() == local.get_relying_party_domain() == "localhost"
    assert local.get_allowed_origins() == ["http://localhost:8000", "http://localhost:8123"]
    # An address is never a relying party: a page opened at 127.0.0.1 is not trusted.
    assert PasskeyHelper(rf.get("/", HTTP_HOST="127.0.0.1:8123")).get_allowed_origins() == [
        "http://localhost:8000"]
    settings.PUBLIC_URL = "https://memory.example.com"
    hosted = PasskeyHelper(rf.get("/", HTTP_HOST="memory.example.com"))
    assert hosted.get_relying_party_domain() == "memory.example.com"
    assert hosted.get_allowed_origins() == ["https://memory.example.com"]
    assert public_url_is_an_address() == []
    settings.PUBLIC_URL = "http://127.0.0.1:8000"
    warned, = public_url_is_an_address()
    assert warned.id == "accounts.W001" and "127.0.0.1" in warned.msg
