"""The Origin check that stops a web page (DNS rebinding) from driving a server it can reach.

Both doors (/mcp and /api/v1) apply it. A request without Origin is not from a
browser and passes; a browser's Origin must be a local one or configured.
"""

from __future__ import annotations

import re

from django.conf import settings

from echomem.errors import Forbidden

LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]"}
# An origin is scheme://host[:port] and nothing else (RFC 6454): no user info, path,
# query or fragment. Anything else ("http://evil.com@localhost") is not an origin.
_ORIGIN = re.compile(r"(?P<scheme>https?)://(?P<host>\[[0-9a-f:.]+\]|[a-z0-9.-]+)"
                     r"(?::(?P<port>[0-9]{1,5}))?", re.IGNORECASE)


def origin_allowed(origin: str | None) -> bool:
    if origin is None:
        return True
    origin = origin.strip().removesuffix("/")
    match = _ORIGIN.fullmatch(origin)
    if match is None:
        return False  # includes the opaque origin "null" of sandboxed frames and file: pages
    if match["host"].lower() in LOCAL_HOSTS:
        return True
    return origin.lower() in allowed_origins()


def allowed_origins() -> set[str]:
    allowed = {o.strip().rstrip("/").lower() for o in settings.MCP_ALLOWED_ORIGINS}
    if settings.PUBLIC_URL:
        match = _ORIGIN.match(settings.PUBLIC_URL)
        if match:
            allowed.add(match.group().lower())
    return allowed


def check_origin(origin: str | None) -> None:
    if not origin_allowed(origin):
        raise Forbidden(
            f"Origin {origin} is not allowed to call this server", field="Origin",
            fix="call it from a server-side client (no Origin header), or add the origin to "
                "ECHO_MEMORY_ALLOWED_ORIGINS if the page is yours",
        )
