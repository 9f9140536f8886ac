"""A password changed, wherever it was changed (a reset link, the admin site's own password
page, an operator setting a user's password in the admin): the person's other sessions are
signed out and they are told."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.http import HttpRequest, HttpResponse

from accounts.security_events import PASSWORD_CHANGED, record_security_event
from accounts.sessions import session_key_changed, sign_out_other_sessions
from accounts.where_from import network_of


@transaction.atomic
def password_changed(*, user: AbstractBaseUser, keep_session_key: str | None,
                     network: str | None = None, key_before: str | None = None) -> int:
    """Sign out every browser session of `user` but `keep_session_key` (the one that changed
    it, when it is theirs: `key_before` was its key until Django gave it a new one), and
    record and mail the change. API keys stay: a key is not a password, and revoking keys
    is its own decision. Returns the sessions signed out."""
    session_key_changed(old=key_before, new=keep_session_key)
    ended = sign_out_other_sessions(user, keep_session_key=keep_session_key)
    record_security_event(user=user, kind=PASSWORD_CHANGED, network=network,
                          detail={"other sessions signed out": ended})
    return ended


def after_admin_password_change(request: HttpRequest, user: AbstractBaseUser,
                                response: HttpResponse, *, key_before: str | None,
                                ) -> HttpResponse:
    """The admin's password pages answer a successful POST with a redirect: then the
    password of `user` has changed. The operator's own session stays when it is theirs
    (under a new key, `key_before` was its old one)."""
    if request.method == "POST" and response.status_code == 302:
        mine = request.user.is_authenticated and request.user.pk == user.pk
        password_changed(user=user, keep_session_key=request.session.session_key if mine
                         else None, network=network_of(request.META),
                         key_before=key_before if mine else None)
    return response
