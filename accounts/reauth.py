"""Re-authentication: when a session last checked who its person is, and the one function
that checks a credential they submit again ("confirm it's you").

The time of the last check is kept in the session (IDENTITY_CHECKED_AT, seconds since the
epoch): set at every sign-in (the site's, the admin's, a password-reset link's, through the
`user_logged_in` receiver in accounts/session_signals.py) and by `confirm_identity`. A
sensitive action (web/reauth.py `sensitive`) goes ahead only while that time is younger
than settings.REAUTH_MAX_AGE.

A credential is checked by a Verifier. The password is the one this module registers;
a second factor adds its own with `register_verifier` (a code from an authenticator app,
a passkey's assertion), and the confirm page offers every verifier that applies to the
person, each as a field named by its `kind`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from echomem.errors import ValidationFailed

IDENTITY_CHECKED_AT = "echo_memory_identity_checked_at"


def identity_checked(session, *, at: float | None = None) -> None:
    """Record in the session that its person has just proved who they are."""
    session[IDENTITY_CHECKED_AT] = int(time.time() if at is None else at)


def identity_checked_recently(session) -> bool:
    """Whether the session's last check is younger than settings.REAUTH_MAX_AGE (a session
    that never had one, e.g. from before this was kept, is not)."""
    checked = session.get(IDENTITY_CHECKED_AT)
    if not isinstance(checked, int):
        return False
    return 0 <= time.time() - checked < settings.REAUTH_MAX_AGE


@dataclass(frozen=True)
class Verifier:
    """One way to prove who you are again. `kind` names the confirm form's field for it and
    the error it raises; `check(user, value)` says whether the submitted value proves it;
    `applies(user)` whether this person has this way at all (a second factor set up)."""

    kind: str
    label: str
    check: Callable[[AbstractBaseUser, str], bool]
    applies: Callable[[AbstractBaseUser], bool]
    help_text: str = ""
    # How the form shows the field: "password", "code" (a one-time code box), or "hidden"
    # (filled by the page's script, e.g. a passkey's assertion after its button is pressed).
    input: str = "password"
    autocomplete: str = "current-password"
    fix: str = "type it again; if you have forgotten it, sign out and reset it"


VERIFIERS: dict[str, Verifier] = {}


def register_verifier(verifier: Verifier) -> None:
    """Offer another way to confirm it's you (a second factor does this when its app loads).
    The confirm page lists them in the order registered."""
    VERIFIERS[verifier.kind] = verifier


def verifiers_for(user: AbstractBaseUser) -> list[Verifier]:
    return [verifier for verifier in VERIFIERS.values() if verifier.applies(user)]


def confirm_identity(*, user: AbstractBaseUser, session, kind: str, value: str) -> None:
    """Check one submitted credential of `kind`; if it proves who `user` is, the session's
    last check is now. Otherwise ValidationFailed naming the field (`kind`) and the fix."""
    verifier = VERIFIERS.get(kind)
    if verifier is None or not verifier.applies(user):
        raise ValidationFailed(f"{kind} is not a way this account can confirm it's you",
                               field="kind", fix="use one of the fields on the page")
    if not value or not user.is_active or not verifier.check(user, value):
        raise ValidationFailed(f"that {verifier.label.lower()} is not right", field=kind,
                               fix=verifier.fix)
    identity_checked(session)


register_verifier(Verifier(
    kind="password", label="Password",
    check=lambda user, value: user.check_password(value),
    applies=lambda user: user.has_usable_password()))
