"""Flows a person starts in the browser that span apps (DESIGN: above accounts and memories)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import IntegrityError, transaction

from accounts.sign_in_names import sign_in_name, users_matching
from memories.catalog.new_accounts import account_create
from web import account_mail
from web.verification import mail_link, mark_unverified


def sign_up(*, email: str, password: str | None = None,
            hashed_password: str | None = None) -> tuple[object, object]:
    """A user named by the email's sign-in name, their account (they own it) and its
    `default` memory, in one transaction; the email must have no account (the user name
    is unique: IntegrityError otherwise)."""
    email = sign_in_name(email)
    with transaction.atomic():
        user = get_user_model()(username=email, email=email,
                                password=hashed_password or make_password(password))
        user.save()
        account = account_create(owner=user, name=email.split("@", 1)[0] + "'s account")
        if settings.VERIFY_EMAIL:
            mark_unverified(user)
    return user, account


def sign_up_or_remind(*, email: str, password: str, absolute: account_mail.Absolute) -> None:
    """The sign-up page's POST: a new account and a mail to confirm it or to sign in; or,
    when the email (any case or width) has an account, a mail to its owner with a sign-in
    and a password-reset link instead, and nothing else.

    The page answers both the same way, and both do the same slow work: the password is
    hashed before anything is looked up, and exactly one mail is sent.
    """
    hashed = make_password(password)
    user = None if users_matching(email) else _sign_up_unless_raced(email, hashed)
    if user is None:  # taken, before or (a sign-up racing this one) meanwhile
        account_mail.already_registered(users_matching(email)[0], absolute)
    elif settings.VERIFY_EMAIL:
        mail_link(user, absolute)
    else:
        account_mail.welcome(user, absolute)


def _sign_up_unless_raced(email: str, hashed: str):
    try:
        user, _ = sign_up(email=email, hashed_password=hashed)
    except IntegrityError:
        if not users_matching(email):  # some other constraint: a fault, not a race
            raise
        return None
    return user
