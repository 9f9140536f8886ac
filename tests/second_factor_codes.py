"""Codes an authenticator app would show, computed from the secret a page shows (with
django-otp's own TOTP), for the tests of two-factor sign-in."""

from __future__ import annotations

import time
from base64 import b32decode

from django_otp.oath import TOTP


def app_code(secret: str, *, steps_ahead: int = 0) -> str:
    """The 6 digits for `secret` now, or `steps_ahead` 30-second steps later (a code is
    accepted once: a second sign-in within one step uses the next step's code)."""
    totp = TOTP(b32decode(secret + "=" * (-len(secret) % 8)))
    totp.time = time.time() + 30 * steps_ahead
    return f"{totp.token():06d}"
