"""Where the OAuth server and the MCP resource live: from the configured public URL (or the
single box's own), never from a request's Host header, so a proxy or a forged header cannot
move them. Read per call: tests change OAUTH2_PROVIDER with override_settings."""

from __future__ import annotations

from django.conf import settings


def issuer() -> str:
    """The authorization server's issuer: the site's base URL, without a trailing slash
    (clients compare it character for character with the metadata's `issuer`)."""
    return settings.OAUTH2_PROVIDER["OIDC_ISS_ENDPOINT"]


def mcp_resource() -> str:
    """The resource tokens are bound to (RFC 8707): this server's /mcp, as clients dial it."""
    return settings.OAUTH2_PROVIDER["OAUTH2_PROTECTED_RESOURCE_IDENTIFIER"]


def resource_metadata_url() -> str:
    """RFC 9728 3.1: the well-known path with the resource's own path after it."""
    return f"{issuer()}/.well-known/oauth-protected-resource/mcp"


def scopes() -> list[str]:
    return list(settings.OAUTH_SCOPES)


def bearer_challenge(*, error: str | None = None, description: str | None = None,
                     scope: str | None = None) -> str:
    """A `WWW-Authenticate: Bearer` value (RFC 6750 3, RFC 9728 5.1): where to find how to
    get a token, the scopes to ask for, and the error when a token was refused."""
    params = [("realm", "echo-memory"), ("resource_metadata", resource_metadata_url()),
              ("scope", scope or " ".join(scopes()))]
    if error:
        params.append(("error", error))
    if description:
        params.append(("error_description", description))
    return "Bearer " + ", ".join(f'{name}="{_quoted(value)}"' for name, value in params)


def _quoted(value: str) -> str:
    value = value.replace("\r", " ").replace("\n", " ")
    return value.replace("\\", "\\\\").replace('"', "'")
