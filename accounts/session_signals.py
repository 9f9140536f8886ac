"""Django's sign-in and sign-out signals, handed to the services: every way in (the site's
sign-in, the admin's, a password-reset link, an invitation accepted as a new user, a test's
force_login) goes through django.contrib.auth.login, so every one is recorded here."""

from __future__ import annotations

import time

from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.urls import reverse

from accounts import reauth, sessions


def _signed_in(sender, request, user, **kwargs) -> None:
    session = request.session
    reauth.identity_checked(session)
    session[sessions.SEEN_AT] = int(time.time())
    if session.session_key is None:  # login() flushed another person's session: no key yet
        session.save()
    door = "admin" if request.path.startswith(reverse("admin:index")) else "site"
    sessions.sign_in_recorded(user=user, session_key=session.session_key, meta=request.META,
                              door=door)


def _signed_out(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        sessions.session_ended(request.session.session_key)


def connect() -> None:
    user_logged_in.connect(_signed_in, dispatch_uid="echo_memory_signed_in")
    user_logged_out.connect(_signed_out, dispatch_uid="echo_memory_signed_out")
