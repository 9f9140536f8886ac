"""A secret made by a POST (an API key, an invitation link), shown once on the page the
POST redirects to: POST-redirect-GET, so reloading that page makes nothing new.

The secret waits for that GET in the person's server-side session, never in a URL or a
cookie, and the GET that shows it takes it out: a reload finds nothing and says so. The
pages that show it are never cached (never_cache)."""

from __future__ import annotations

from django.http import HttpRequest

PREFIX = "echo_memory_shown_once:"


def keep(request: HttpRequest, kind: str, object_id: int, secret: str) -> None:
    request.session[PREFIX + kind] = {"id": object_id, "secret": secret}


def take(request: HttpRequest, kind: str, object_id: int | None = None) -> tuple[int, str] | None:
    """(object id, secret) kept for `kind` (for `object_id` when given), once; None when it
    was shown already or was never made in this session."""
    held = request.session.get(PREFIX + kind)
    if not isinstance(held, dict) or object_id not in (None, held.get("id")):
        return None
    del request.session[PREFIX + kind]
    return held.get("id"), held.get("secret")
