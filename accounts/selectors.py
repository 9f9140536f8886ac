"""Reads the pages make of an account: the account itself and its live API keys."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet

from accounts.models import Account, ApiKey, Invitation, Membership
from accounts.principal import Principal
from accounts.team import pending_invitations


def account_of(principal: Principal) -> Account:
    return Account.objects.get(pk=principal.account_id)


def listed_keys(principal: Principal, role: str) -> QuerySet[ApiKey]:
    """The account's live keys, newest first; a member sees only their own, so every key
    listed is one they may revoke."""
    keys = ApiKey.objects.filter(account_id=principal.account_id, revoked_at__isnull=True)
    if role == Membership.Role.MEMBER:
        keys = keys.filter(holder_id=principal.holder_id)
    return keys.select_related("holder", "default_memory").order_by("-created_at", "-pk")


def own_live_key(principal: Principal, key_id: int) -> ApiKey | None:
    """The person's own live key in this account (with its default memory), else None."""
    return (ApiKey.objects.filter(pk=key_id, account_id=principal.account_id,
                                  holder_id=principal.holder_id, revoked_at__isnull=True)
            .select_related("default_memory").first())


def live_keys_held(principal: Principal, user_id: int) -> int:
    """How many live keys a member holds in this account (what removing them revokes)."""
    return ApiKey.objects.filter(account_id=principal.account_id, holder_id=user_id,
                                 revoked_at__isnull=True).count()


def pending_invitation(principal: Principal, invitation_id: int) -> Invitation | None:
    return pending_invitations(principal).filter(pk=invitation_id).first()


def user_with_email(user_id: object, email: object) -> AbstractBaseUser | None:
    """The user, if their address is still `email` (a link mailed to it names both)."""
    return get_user_model().objects.filter(pk=user_id, email=email).first()
