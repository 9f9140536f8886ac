"""Passkeys' relying party: the box's public URL (a passkey is bound to the host it was made
on, and a relying party cannot be an IP address: the single box's URL is
http://localhost:PORT). The ceremony itself is django-otp-webauthn's; what it saves goes
through accounts.second_factors.add_passkey. The public URL is read from the setting
(ECHO_MEMORY_PUBLIC_URL) that echomem.public_url also reads."""

from __future__ import annotations

from ipaddress import ip_address
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest
from django_otp_webauthn.helpers import WebAuthnHelper

from accounts.second_factors import add_passkey
from accounts.where_from import network_of

LOCAL_BOX = "http://localhost:8000"


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.hostname or ""


def _configured() -> str:
    # ECHO_MEMORY_PUBLIC_URL, else the single box's own default; never the address an API
    # request came in at (echomem.public_url's fallback), which may be an IP address.
    return settings.PUBLIC_URL or LOCAL_BOX


def relying_party_id(request: HttpRequest | None = None) -> str:
    """The configured public URL's host (without one, localhost)."""
    return _origin(_configured())[1]


class PasskeyHelper(WebAuthnHelper):
    def get_relying_party_domain(self) -> str:
        return relying_party_id(self.request)

    def get_allowed_origins(self) -> list[str]:
        configured, host = _origin(_configured())
        if settings.PUBLIC_URL:
            return [configured]
        # No public URL configured: the box answers on localhost at whatever port it was
        # started on; the browser's origin is then the page's own, on that host only.
        own, own_host = _origin(self.request.build_absolute_uri("/"))
        return [configured, own] if own_host == host else [configured]

    def register_complete(self, user, state, data):
        parent = super().register_complete
        return add_passkey(user=user, create=lambda: parent(user=user, state=state, data=data),
                           network=network_of(self.request.META))


def public_url_is_an_address(app_configs=None, **kwargs) -> list:
    """A system check: passkeys cannot work on a box whose public URL is an IP address."""
    from django.core.checks import Warning

    host = relying_party_id()
    try:
        ip_address(host)
    except ValueError:
        return []
    return [Warning(f"ECHO_MEMORY_PUBLIC_URL's host is the address {host}: browsers refuse "
                    "passkeys there (a relying party must be a host name)",
                    hint="use a host name, e.g. http://localhost:PORT on a single box",
                    id="accounts.W001")]
