"""A person's second factors: an authenticator app (TOTP), passkeys, and recovery codes,
all django-otp devices (docs/security.md, "Two-factor sign-in").

A factor counts once it is confirmed: a TOTP secret by a code from the app, a passkey by
the browser's signed answer. Recovery codes are a way back in when the app or passkey is
lost, never a factor of their own: removing the last factor removes them too.

Adding and removing go through one function each (`totp_confirm` and `add_passkey` add,
`remove_factor` removes) so that what follows every such change is written once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import qrcode
import qrcode.image.svg
from django.db import transaction
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from accounts.models import Account
from accounts.security_events import (
    SECOND_FACTOR_ADDED,
    SECOND_FACTOR_REMOVED,
    record_security_event,
)
from accounts.sessions import sign_out_other_sessions
from echomem.errors import NotFound, ValidationFailed
from echomem.text import checked_display_name

RECOVERY_CODES = 10
RECOVERY_DEVICE = "Recovery codes"
APP_DEVICE = "Authenticator app"
NAME_CHARS = 64  # django-otp's Device.name
CODE_CHARS = 32  # a TOTP code is 6 digits, a recovery code 8 letters and digits


@dataclass(frozen=True)
class Passkey:
    id: int
    name: str
    created_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class Factors:
    """What a person has set up; `app_since` is None without a confirmed app."""

    app_since: datetime | None
    passkeys: list[Passkey]
    recovery_codes_left: int

    @property
    def any(self) -> bool:
        return self.app_since is not None or bool(self.passkeys)


@dataclass(frozen=True)
class TotpSetup:
    """A secret waiting for its first code: as text to type and as the app's QR code."""

    secret: str
    uri: str
    qr_svg: str


def factors_of(*, user: Any) -> Factors:
    app = TOTPDevice.objects.devices_for_user(user, confirmed=True).first()
    passkeys = [Passkey(p.pk, p.name, p.created_at, p.last_used_at) for p in
                WebAuthnCredential.objects.devices_for_user(user, confirmed=True)
                .order_by("pk")]
    left = StaticToken.objects.filter(device__user=user, device__confirmed=True).count()
    return Factors(app_since=app.created_at if app else None, passkeys=passkeys,
                   recovery_codes_left=left)


def has_factor(*, user: Any) -> bool:
    """Whether signing in needs a second step: a confirmed app or passkey."""
    return (TOTPDevice.objects.devices_for_user(user, confirmed=True).exists()
            or WebAuthnCredential.objects.devices_for_user(user, confirmed=True).exists())


def factor_required(*, user: Any) -> bool:
    """Whether an account the person belongs to requires every member to have a factor."""
    return Account.objects.filter(memberships__user=user, require_second_factor=True).exists()


def _qr_svg(uri: str) -> str:
    # SVG paths, no inline style: the page's strict CSP allows it as markup.
    image = qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage, box_size=8)
    return image.to_string(encoding="unicode")


def _setup_of(device: TOTPDevice) -> TotpSetup:
    uri = device.config_url
    secret = uri.split("secret=", 1)[1].split("&", 1)[0]
    return TotpSetup(secret=secret, uri=uri, qr_svg=_qr_svg(uri))


@transaction.atomic
def totp_begin(*, user: Any) -> TotpSetup:
    """The secret to set up the app with: the one waiting since the last visit, else a new
    one. Refused while a confirmed app is on (remove it first: one app per person)."""
    if TOTPDevice.objects.devices_for_user(user, confirmed=True).exists():
        raise ValidationFailed("an authenticator app is already set up", field="app",
                               fix="remove it first to set up another")
    waiting = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("-pk").first()
    if waiting is None:
        waiting = TOTPDevice.objects.create(user=user, name=APP_DEVICE, confirmed=False)
    return _setup_of(waiting)


def _clean_code(code: str, *, field: str = "code") -> str:
    """The code as stored: spaces and dashes people type between groups dropped, lower
    case (recovery codes), or a refusal saying what a code looks like."""
    cleaned = "".join(ch for ch in code if ch not in " -\t").lower()
    if not cleaned:
        raise ValidationFailed("no code was given", field=field,
                               fix="type the 6-digit code your app shows, or a recovery code")
    if len(cleaned) > CODE_CHARS or not cleaned.isascii() or not cleaned.isalnum():
        raise ValidationFailed("that is not a code", field=field,
                               fix="type the 6 digits your app shows now, or one of your "
                                   "recovery codes (8 letters and digits)")
    return cleaned


@transaction.atomic
def totp_confirm(*, user: Any, code: str,
                 network: str | None = None) -> tuple[TOTPDevice, list[str]]:
    """Turn on the waiting app once its code checks out. Returns it, and new recovery codes
    (to show once) when the person had none, else []. The person is told (a security
    event: audit and mail, from `network`)."""
    cleaned = _clean_code(code)
    waiting = (TOTPDevice.objects.select_for_update().filter(user=user, confirmed=False)
               .order_by("-pk").first())
    if waiting is None:
        raise ValidationFailed("there is no app set-up waiting for a code", field="code",
                               fix="start again from the account security page")
    if not (cleaned.isdigit() and waiting.verify_token(cleaned)):
        raise ValidationFailed("that code is not the one the app shows now", field="code",
                               fix="scan the QR code again (or type the secret) and type "
                                   "the code the app shows now; check the phone's clock")
    waiting.confirmed = True
    waiting.save(update_fields=["confirmed"])
    TOTPDevice.objects.filter(user=user, confirmed=False).delete()
    record_security_event(user=user, kind=SECOND_FACTOR_ADDED, network=network,
                          detail={"factor": APP})
    has_codes = StaticToken.objects.filter(device__user=user).exists()
    return waiting, [] if has_codes else _new_recovery_codes(user)


def _new_recovery_codes(user: Any) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=RECOVERY_DEVICE, confirmed=True)
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


@transaction.atomic
def recovery_codes_regenerate(*, user: Any) -> list[str]:
    """New recovery codes replacing all the old ones (used or not), to show once."""
    if not has_factor(user=user):
        raise ValidationFailed("recovery codes stand in for an app or a passkey",
                               field="recovery_codes",
                               fix="set up an authenticator app or a passkey first")
    return _new_recovery_codes(user)


def add_passkey(*, user: Any, create: Callable[[], WebAuthnCredential],
                network: str | None = None) -> WebAuthnCredential:
    """Record the passkey the browser just made (`create` checks its signed answer and
    saves it), named "Passkey N" until the person names it; the person is told (a
    security event)."""
    with transaction.atomic():
        device = create()
        count = WebAuthnCredential.objects.filter(user=user).count()
        device.name = f"Passkey {count}"
        device.confirmed = True
        device.save(update_fields=["name", "confirmed"])
        record_security_event(user=user, kind=SECOND_FACTOR_ADDED, network=network,
                              detail={"factor": PASSKEY, "name": device.name})
    return device


def _passkey_of(user: Any, passkey_id: object) -> WebAuthnCredential:
    try:
        return WebAuthnCredential.objects.select_for_update().get(pk=int(passkey_id),
                                                                 user=user)
    except (TypeError, ValueError, OverflowError, WebAuthnCredential.DoesNotExist):
        raise NotFound("no such passkey of yours", field="passkey",
                       fix="pick one from the list on the account security page") from None


def passkey_name_check(name: str) -> str:
    return checked_display_name(name, field="name", missing="a passkey needs a name",
                                example="where it lives, e.g. “work laptop”", most=NAME_CHARS)


@transaction.atomic
def rename_passkey(*, user: Any, passkey_id: object, name: str | None) -> WebAuthnCredential:
    """Name one of the person's passkeys; None keeps the name it has."""
    checked = None if name is None else passkey_name_check(name)
    passkey = _passkey_of(user, passkey_id)
    if checked is not None:
        passkey.name = checked
        passkey.save(update_fields=["name"])
    return passkey


def recovery_codes_missing(*, user: Any) -> bool:
    """A factor but no unused recovery code: the page offers (or makes) new ones."""
    return has_factor(user=user) and not StaticToken.objects.filter(
        device__user=user, device__confirmed=True).exists()


APP, PASSKEY = "app", "passkey"


@transaction.atomic
def remove_factor(*, user: Any, kind: str, factor_id: object = None,
                  keep_session_key: str | None = None, network: str | None = None) -> None:
    """Remove the app (`kind` "app") or one passkey (`kind` "passkey", its id). The last
    factor goes only where no account of the person requires one, and takes the recovery
    codes with it. A factor turned off signs out every other session of the person (all
    but `keep_session_key`: a thief's session that the factor kept out must not stay), and
    the person is told (a security event)."""
    if kind == APP:
        removed = TOTPDevice.objects.filter(user=user)
        if not removed.filter(confirmed=True).exists():
            raise NotFound("no authenticator app is set up", field="app",
                           fix="there is nothing to remove")
    elif kind == PASSKEY:
        removed = WebAuthnCredential.objects.filter(pk=_passkey_of(user, factor_id).pk)
    else:
        raise ValidationFailed(f"no kind of factor is called {kind!r}", field="kind",
                               fix="use app or passkey")
    # Locked so two removals at once cannot each see the other as "still there".
    list(Account.objects.select_for_update().filter(memberships__user=user))
    removed.delete()
    if not has_factor(user=user):
        if factor_required(user=user):
            raise ValidationFailed("an account you belong to requires a second factor",
                                   field=kind, fix="add another passkey or an app first, "
                                                   "then remove this one")
        StaticDevice.objects.filter(user=user).delete()
    sign_out_other_sessions(user, keep_session_key=keep_session_key)
    record_security_event(user=user, kind=SECOND_FACTOR_REMOVED, network=network,
                          detail={"factor": kind})


def verify_code(*, user: Any, code: str) -> Device:
    """The device a code from the app, or a recovery code, belongs to; a recovery code
    works once. Each device slows down repeated wrong codes (django-otp's throttling: one
    second after a wrong code, then twice as long after each further one)."""
    cleaned = _clean_code(code)
    throttled = False
    with transaction.atomic():
        kinds = [StaticDevice] if not cleaned.isdigit() else [TOTPDevice, StaticDevice]
        for kind in kinds:
            for device in kind.objects.devices_for_user(user, confirmed=True) \
                    .select_for_update():
                allowed, _ = device.verify_is_allowed()
                if not allowed:
                    throttled = True
                elif device.verify_token(cleaned):
                    return device
    if throttled:
        raise ValidationFailed("too many wrong codes in a row", field="code",
                               fix="wait a few seconds, then type the code your app shows "
                                   "now")
    raise ValidationFailed("that code does not match", field="code",
                           fix="type the code your app shows now, or an unused recovery "
                               "code; after several wrong codes, wait a little")
