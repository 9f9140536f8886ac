"""The browser sessions a person is signed in with: recorded at sign-in, seen again now and
then, listed on the sessions page, and ended, one, or all but the one in use.

A session here is Django's session (its key is the credential in the browser's cookie) plus a
SignedInSession row that describes it. Ending one deletes the Django session itself, so the
browser holding it is signed out on its next request, on any worker; the row goes with it.
"""

from __future__ import annotations

import time
from importlib import import_module

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from accounts.models import SignedInSession, SignInNetwork
from accounts.security_events import NEW_NETWORK_SIGN_IN, record_security_event
from accounts.where_from import device_of, network_of
from echomem.errors import NotFound

# When the session's last-seen time was last written (seconds since the epoch), kept in
# the session so that the check costs no query.
SEEN_AT = "echo_memory_seen_at"


def _store(session_key: str | None = None):
    return import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)


def _live_user_id(session_key: str) -> str | None:
    """Whose signed-in session this key is, while it is live (not ended, not expired)."""
    return _store(session_key).load().get(SESSION_KEY)


@transaction.atomic
def sign_in_recorded(*, user: AbstractBaseUser, session_key: str, meta: dict,
                     door: str = "site") -> SignedInSession:
    """A sign-in just made `session_key` `user`'s: describe the session, forget the ones that
    ended meanwhile, and if the network is new for a person who has signed in before, that
    is a security event."""
    now = timezone.now()
    network = network_of(meta)
    row, _ = SignedInSession.objects.update_or_create(session_key=session_key, defaults={
        "user": user, "device": device_of(meta.get("HTTP_USER_AGENT", "")),
        "network": network, "door": door, "signed_in_at": now, "last_seen_at": now})
    _forget_ended(user, keep=session_key)
    known = SignInNetwork.objects.filter(user=user)
    first_ever = not known.exists()
    _, new = SignInNetwork.objects.update_or_create(user=user, network=network)
    if new and not first_ever:
        record_security_event(user=user, kind=NEW_NETWORK_SIGN_IN, network=network,
                              detail={"device": row.device})
    return row


def _forget_ended(user: AbstractBaseUser, *, keep: str) -> None:
    ended = [row.pk for row in SignedInSession.objects.filter(user=user).exclude(
        session_key=keep) if _live_user_id(row.session_key) != str(user.pk)]
    SignedInSession.objects.filter(pk__in=ended).delete()


def session_seen(*, user: AbstractBaseUser, session, meta: dict, at_once: bool = False) -> None:
    """The session is in use: write when and from where, at most every
    settings.SESSION_SEEN_EVERY seconds (the time of the last write waits in the session),
    or at once with `at_once` (the sessions page, which shows this one). A session without a
    row (signed in before sessions were tracked, or given a new key when its password
    changed) gets one."""
    stamp = session.get(SEEN_AT)
    if not at_once and isinstance(stamp, int) and \
            time.time() - stamp < settings.SESSION_SEEN_EVERY:
        return
    now = timezone.now()
    network = network_of(meta)
    written = SignedInSession.objects.filter(session_key=session.session_key, user=user).update(
        last_seen_at=now, network=network)
    if not written:
        SignedInSession.objects.update_or_create(session_key=session.session_key, defaults={
            "user": user, "device": device_of(meta.get("HTTP_USER_AGENT", "")),
            "network": network, "signed_in_at": None, "last_seen_at": now})
    session[SEEN_AT] = int(time.time())


def session_key_changed(*, old: str | None, new: str | None) -> None:
    """The session got a new key (Django gives one when the password changes and the session
    stays signed in): its row follows, with when it signed in."""
    if old and new and old != new:
        SignedInSession.objects.filter(session_key=old).update(session_key=new)


def session_ended(session_key: str | None) -> None:
    """A sign-out: the session is gone, so is its row."""
    if session_key:
        SignedInSession.objects.filter(session_key=session_key).delete()


def active_sessions(user: AbstractBaseUser) -> list[SignedInSession]:
    """The person's live sessions, the most recently seen first. One query for the rows and
    one per row to ask the session store whether it is still live (a person has a few)."""
    rows = SignedInSession.objects.filter(user=user).order_by("-last_seen_at", "-pk")
    return [row for row in rows if _live_user_id(row.session_key) == str(user.pk)]


def _end(rows) -> int:
    """Delete each row's Django session; how many of them were still live."""
    live = 0
    for row in rows:
        live += _live_user_id(row.session_key) == str(row.user_id)
        _store().delete(row.session_key)
    return live


@transaction.atomic
def sign_out_session(*, user: AbstractBaseUser, sign_in_id: int,
                     current_session_key: str | None) -> SignedInSession:
    """End one of the person's sessions (not the one in use: signing out does that). Another
    person's session, or one already ended, is NotFound."""
    row = SignedInSession.objects.filter(pk=sign_in_id, user=user).exclude(
        session_key=current_session_key or "").first()
    if row is None:
        raise NotFound("there is no such session of yours to sign out", field="session",
                       fix="pick a session from the list on the sessions page")
    _end([row])
    row.delete()
    return row


@transaction.atomic
def sign_out_other_sessions(user: AbstractBaseUser, *, keep_session_key: str | None) -> int:
    """End every browser session of `user` but `keep_session_key` (None: all of them): after
    a password change, when a second factor is turned off, or on request. API keys are not
    touched. Returns how many were signed out."""
    rows = list(SignedInSession.objects.filter(user=user).exclude(
        session_key=keep_session_key or ""))
    ended = _end(rows)
    SignedInSession.objects.filter(pk__in=[row.pk for row in rows]).delete()
    return ended
