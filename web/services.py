"""Flows a person starts in the browser that span apps (DESIGN: above accounts and memories)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from accounts.models import Account
from accounts.services import account_create


def sign_up(*, email: str, password: str) -> tuple[object, Account]:
    """A user, their account (they own it) and its `default` memory, in one transaction."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=email, email=email,
                                                    password=password)
        account = account_create(owner=user, name=email.split("@", 1)[0] + "'s account")
    return user, account
