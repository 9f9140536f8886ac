"""Deploy checks: connectors find the server by the issuer and resource it names, which come
from the configured public URL; without one they are the single box's default address."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Warning

from echomem import oauth_addresses


def public_url_named(app_configs=None, **kwargs) -> list:
    if settings.PUBLIC_URL or settings.SERVED_AT:
        return []
    return [Warning(
        f"no ECHO_MEMORY_PUBLIC_URL: OAuth connectors are told the issuer "
        f"{oauth_addresses.issuer()} and the resource {oauth_addresses.mcp_resource()}, "
        "which they cannot reach unless this is a single box on that address",
        hint="set ECHO_MEMORY_PUBLIC_URL to the https URL people reach the site at "
             "(docs/connect.md, self-hosting)", id="oauth.W001")]


def https_issuer(app_configs=None, **kwargs) -> list:
    if not getattr(settings, "SECURE_SSL_REDIRECT", False):
        return []
    if oauth_addresses.issuer().startswith("https://"):
        return []
    return [Warning(f"the site is served over https but the OAuth issuer is "
                    f"{oauth_addresses.issuer()}: clients compare it exactly",
                    hint="set ECHO_MEMORY_PUBLIC_URL to the https URL", id="oauth.W002")]
