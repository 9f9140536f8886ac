"""Passkeys' relying party: the box's public URL (a passkey is bound to the host it was made
on, and a relying party cannot be an IP address: the single box's URL is
http://localhost:PORT). The ceremony itself is django-otp-webauthn's; what it saves goes
through accounts.second_factors.add_passkey."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest
from django_otp_webauthn.helpers import WebAuthnHelper

from accounts.second_factors import add_passkey
from echomem.public_url import public_url


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.hostname or ""


def relying_party_id(request: HttpRequest | None = None) -> str:
    """The configured public URL's host (without it, localhost)."""
    return _origin(public_url("/"))[1]


def allowed_origins() -> list[str]:
    """For the package's configuration check; the helper answers per request."""
    return [_origin(public_url("/"))[0]]


class PasskeyHelper(WebAuthnHelper):
    def get_relying_party_domain(self) -> str:
        return relying_party_id(self.request)

    def get_allowed_origins(self) -> list[str]:
        configured, host = _origin(public_url("/"))
        if settings.PUBLIC_URL:
            return [configured]
        # No public URL configured: the box answers on localhost at whatever port it was
        # started on; the browser's origin is then the page's own, on that host only.
        own, own_host = _origin(self.request.build_absolute_uri("/"))
        return [configured, own] if own_host == host else [configured]

    def register_complete(self, user, state, data):
        parent = super().register_complete
        return add_passkey(user=user, create=lambda: parent(user=user, state=state, data=data))
