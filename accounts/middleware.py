"""Keeps the sessions page's "last seen" true without a write per request: a signed-in
browser's request writes it when the last write is older than settings.SESSION_SEEN_EVERY
(accounts/sessions.py session_seen). Requests without a session cookie (every agent's call
to /mcp and /api/v1) are not looked at."""

from __future__ import annotations

from django.conf import settings

from accounts.sessions import session_seen


class SessionSeen:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if settings.SESSION_COOKIE_NAME in request.COOKIES:
            user = getattr(request, "user", None)
            if user is not None and user.is_authenticated and request.session.session_key:
                session_seen(user=user, session=request.session, meta=request.META)
        return self.get_response(request)
