"""A second factor confirms it's you on the re-authentication page too: a code from the
authenticator app, or an unused recovery code, beside the password (accounts/reauth.py).
A passkey-only person confirms with their password there."""

from __future__ import annotations

from accounts.reauth import Verifier, register_verifier
from accounts.second_factors import has_factor, verify_code
from echomem.errors import ValidationFailed


def _code_proves(user, value: str) -> bool:
    try:
        verify_code(user=user, code=value)
    except ValidationFailed:
        return False
    return True


def register() -> None:
    register_verifier(Verifier(
        kind="code", label="Code from your authenticator app or a recovery code",
        check=_code_proves, applies=lambda user: has_factor(user=user),
        help_text="Instead of the password: the 6 digits your app shows now, or one unused "
                  "recovery code (it is then used up).",
        input="code", autocomplete="one-time-code",
        fix="type the code your app shows now, or an unused recovery code"))
