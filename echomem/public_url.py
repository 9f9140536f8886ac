"""Absolute links in replies that have no request at hand (an engine error, an email)."""

from __future__ import annotations

from contextvars import ContextVar

from django.conf import settings

# Set by echomem.admission for each API request: the address the client reached us at.
request_base: ContextVar[str | None] = ContextVar("request_base", default=None)


def public_url(path: str) -> str:
    """ECHO_MEMORY_PUBLIC_URL + path, else the current request's scheme and host + path."""
    base = settings.PUBLIC_URL or (request_base.get() or "http://localhost:8000").rstrip("/")
    return base + path
