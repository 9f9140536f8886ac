"""The Origin check that stops a web page (DNS rebinding) from driving a local server."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


def origin_allowed(origin: str | None) -> bool:
    """No Origin (not a browser) passes; a browser's must be local or configured."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/")
    parts = urlsplit(origin)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return False  # includes the opaque origin "null" of sandboxed frames and file: pages
    if parts.hostname.lower() in LOCAL_HOSTS:
        return True
    allowed = {o.strip().rstrip("/").lower() for o in settings.MCP_ALLOWED_ORIGINS}
    if settings.PUBLIC_URL:
        public = urlsplit(settings.PUBLIC_URL)
        allowed.add(f"{public.scheme}://{public.netloc}".lower())
    return origin.lower() in allowed
