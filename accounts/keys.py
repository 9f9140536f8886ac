"""API key format: `em_<prefix>_<secret>`.

The prefix (12 hex characters) finds the row with one unique-index lookup; the
secret (32 random bytes) is kept only as a SHA-256 digest. A slow hash buys
nothing here: the secret is random, not a password a person chose.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

KEY_PATTERN = re.compile(r"^em_(?P<prefix>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{43})$")


@dataclass(frozen=True)
class IssuedKey:
    prefix: str
    secret_hash: str
    plaintext: str


def issue(prefix: str | None = None) -> IssuedKey:
    """A new key; with `prefix`, a new secret for that key (a rotation)."""
    prefix = prefix or secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return IssuedKey(prefix=prefix, secret_hash=hash_secret(secret),
                     plaintext=f"em_{prefix}_{secret}")


def hash_secret(secret: str) -> str:
    return hashlib.sha256(f"echo-memory-api-key:{secret}".encode()).hexdigest()


def parse(plaintext: str) -> tuple[str, str] | None:
    """(prefix, secret) of a well-formed key, else None."""
    match = KEY_PATTERN.match(plaintext)
    return (match["prefix"], match["secret"]) if match else None


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)


def looks_like_key(text: str) -> bool:
    """Ours (well-formed or not) rather than another kind of Bearer credential (an OAuth
    access token): a bad one is a guess at a key."""
    return text.startswith("em_")


# OAuth tokens carry their kind in a prefix too (as keys do), so a Bearer value is routed
# without a lookup and secret scanners can tell them apart.
ACCESS_TOKEN_PREFIX = "emat_"
REFRESH_TOKEN_PREFIX = "emrt_"


def looks_like_access_token(text: str) -> bool:
    return text.startswith(ACCESS_TOKEN_PREFIX)


def new_access_token(request=None) -> str:
    """django-oauth-toolkit's ACCESS_TOKEN_GENERATOR (it passes oauthlib's request)."""
    return ACCESS_TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_refresh_token(request=None) -> str:
    return REFRESH_TOKEN_PREFIX + secrets.token_urlsafe(32)
