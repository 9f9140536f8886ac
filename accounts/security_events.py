"""Security events: what happened to a person's sign-in that they should hear about, in the
audit log of each account they belong to (or the one the event is about) and in a mail to
them that says what, when, from where, and what to do if it was not them.

Kinds (the audit log's action for each):
- NEW_NETWORK_SIGN_IN: a sign-in from a network this person never signed in from before
  (accounts/sessions.py; their very first sign-in is not news).
- PASSWORD_CHANGED: a new password, from a reset link or the admin site.
- KEY_CREATED: an API key issued to them. accounts.services.api_key_create records the
  `key.created` event itself, in its transaction, so this kind only mails.
- APP_CONNECTED: an app (an OAuth client) connected to their account; accounts.connections
  records the `connection.created` event itself, so this kind only mails.
- SECOND_FACTOR_ADDED / SECOND_FACTOR_REMOVED: an authenticator app or a passkey set up or
  taken away (recorded by the second-factor code).
"""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from accounts.account_events import account_event
from accounts.models import Membership
from echomem.public_url import public_url

log = logging.getLogger(__name__)

NEW_NETWORK_SIGN_IN = "security.new_network_sign_in"
PASSWORD_CHANGED = "security.password_changed"
KEY_CREATED = "key.created"
APP_CONNECTED = "connection.created"
SECOND_FACTOR_ADDED = "security.second_factor_added"
SECOND_FACTOR_REMOVED = "security.second_factor_removed"


@dataclass(frozen=True)
class Kind:
    subject: str
    what: str  # the mail's first sentence
    audited_here: bool = True


KINDS = {
    NEW_NETWORK_SIGN_IN: Kind("New sign-in to your Echo Memory account",
                              "Someone signed in to your Echo Memory account from a network "
                              "it has not been signed in from before."),
    PASSWORD_CHANGED: Kind("Your Echo Memory password was changed",
                           "The password of your Echo Memory account was changed. Every other "
                           "session signed in to it was signed out."),
    KEY_CREATED: Kind("A new API key on your Echo Memory account",
                      "An API key was created for you. Whoever holds it can read and write "
                      "your memories through its agent.", audited_here=False),
    APP_CONNECTED: Kind("An app was connected to your Echo Memory account",
                        "You let an app use your memories (you consented in the browser). "
                        "It can use them until you revoke it under Connected apps.",
                        audited_here=False),
    SECOND_FACTOR_ADDED: Kind("A second factor was added to your Echo Memory account",
                              "A second factor (an authenticator app or a passkey) was added "
                              "to your Echo Memory account."),
    SECOND_FACTOR_REMOVED: Kind("A second factor was removed from your Echo Memory account",
                                "A second factor (an authenticator app or a passkey) was "
                                "removed from your Echo Memory account. Every other session "
                                "signed in to it was signed out."),
}


def mail_address(user: AbstractBaseUser) -> str:
    """Where a person's security mail goes: their email, else a user name that is one; ""
    for a user with neither (the single box's owner made by quickstart)."""
    email = getattr(user, "email", "") or ""
    name = user.get_username()
    return email or (name if "@" in name else "")


def record_security_event(*, user: AbstractBaseUser, kind: str, network: str | None = None,
                          account_id: int | None = None,
                          detail: dict[str, Any] | None = None) -> None:
    """Audit `kind` (one of KINDS) for `user` in `account_id`'s log, or in every account's they
    belong to when None, and mail them once the transaction commits. `network` is where it
    came from (accounts/where_from.py); `detail` a few more fields for the log and the mail
    (a key's name, a factor's kind). Call inside the change's transaction."""
    shape = KINDS[kind]
    detail = dict(detail or {})
    when = timezone.now()
    with transaction.atomic():
        if shape.audited_here:
            accounts = [account_id] if account_id is not None else list(
                Membership.objects.filter(user=user).order_by("account_id")
                .values_list("account_id", flat=True))
            for account in accounts:
                account_event(account_id=account, actor_id=user.pk, action=kind,
                              object_id=user.pk, tool="web",
                              after={"user": user.get_username(), "network": network,
                                     **detail})
        address = mail_address(user)
        if address:
            transaction.on_commit(lambda: _mail(address, shape, when=when, network=network,
                                                detail=detail))


def _mail(to: str, shape: Kind, *, when, network: str | None, detail: dict[str, Any]) -> None:
    body = render_to_string("accounts/email/security_event.txt", {
        "what": shape.what, "when": when, "network": network, "detail": detail.items(),
        "reset_url": public_url(reverse("web:password_reset")),
        "sessions_url": public_url(reverse("web:sessions")),
        "audit_url": public_url(reverse("web:audit_log")),
    })
    try:
        send_mail(shape.subject, body, None, [to])
    except (OSError, smtplib.SMTPException) as failure:
        # The change stands; the log says the person was not told.
        log.warning("could not send the security mail %r: %s", shape.subject, failure)
