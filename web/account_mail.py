"""The mails that answer a sign-up or a password-reset request, one per request whatever the
answer is, so that neither the page nor the time taken says whether an address has an
account. Sent at once; a mail server that refuses is logged, and the page a person sees
stays the same (they can sign in, or ask again)."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Callable

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse

log = logging.getLogger(__name__)

# A page's absolute address from its path (request.build_absolute_uri).
Absolute = Callable[[str], str]


def send(*, subject: str, template: str, context: dict, to: str) -> bool:
    """Render and send one mail; False (logged, never raised) when the server refuses."""
    try:
        send_mail(subject, render_to_string(f"web/email/{template}", context), None, [to])
    except (OSError, smtplib.SMTPException) as failure:
        log.warning("could not send the %s mail: %s", template, failure)
        return False
    return True


def recipient(user) -> str:
    """Where a user's mail goes: their email, else a user name that is one."""
    return user.email or user.get_username()


def links(absolute: Absolute) -> dict[str, str]:
    return {"sign_in": absolute(reverse("web:login")),
            "reset": absolute(reverse("web:password_reset")),
            "sign_up": absolute(reverse("web:signup")) if settings.OPEN_SIGNUP else ""}


def welcome(user, absolute: Absolute) -> bool:
    """A new account without email verification: it is ready, sign in."""
    return send(subject="Your Echo Memory account is ready", template="welcome.txt",
                context={"email": recipient(user), **links(absolute)}, to=recipient(user))


def already_registered(user, absolute: Absolute) -> bool:
    """Sign-up with an address that has an account: sign in, or reset the password."""
    return send(subject="You already have an Echo Memory account",
                template="already_registered.txt",
                context={"email": recipient(user), **links(absolute)}, to=recipient(user))


def no_account_to_reset(email: str, absolute: Absolute) -> bool:
    """A password reset for an address no account can reset with."""
    return send(subject="Set your Echo Memory password", template="no_account_to_reset.txt",
                context={"email": email, **links(absolute)}, to=email)
