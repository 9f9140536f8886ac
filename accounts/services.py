"""Writes on tenants: accounts, memberships, API keys."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone

from accounts import key_cache, keys
from accounts.account_events import account_event
from accounts.limits import check_memory_choice
from accounts.models import KEY_RATE_MAX, Account, ApiKey, Membership
from accounts.security_events import KEY_CREATED, record_security_event
from echomem.errors import Forbidden, NotFound, ValidationFailed


# A key's default memory is the engine's Memory; tenancy imports no engine, so it is typed
# as a model here.
def api_key_check(
    *, account: Account, holder: AbstractBaseUser, tool: str, default_memory: models.Model | None,
    memories: Sequence[models.Model] | None = None, expires_at: datetime | None = None,
) -> None:
    """The rules a key request must meet; forms call this to show errors before saving.
    `memories` limits the key to those memories (None: every one), its default among them."""
    if not Membership.objects.filter(account=account, user=holder).exists():
        raise ValidationFailed("the key holder is not a member of this account", field="holder",
                               fix="add the user to the account first")
    if not tool.strip():
        raise ValidationFailed("a key needs a tool label", field="tool",
                               fix="name the agent that will use it, e.g. claude-code")
    check_memory_choice(account_id=account.pk, memories=memories,
                        default_memory=default_memory, holder="key")
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationFailed("the expiry date has passed", field="expires_on",
                               fix="pick a date after today, or none for a key that does "
                                   "not expire")


@transaction.atomic
def api_key_create(
    *, account: Account, holder: AbstractBaseUser, name: str, tool: str,
    default_memory: models.Model | None = None, actor_id: int | None = None,
    read_only: bool = False, memories: Sequence[models.Model] | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Issue a key, with its limits (accounts/limits.py); the plaintext is returned here once
    and never stored. `actor_id` is who issued it when not the holder (an admin in the admin
    site). The one place a key is made: a person does it, never a key (DESIGN: a key never
    creates keys or grants)."""
    api_key_check(account=account, holder=holder, tool=tool, default_memory=default_memory,
                  memories=memories, expires_at=expires_at)
    tool = tool.strip()
    issued = keys.issue()
    key = ApiKey.objects.create(
        account=account, holder=holder, name=name.strip() or tool, tool=tool,
        prefix=issued.prefix, secret_hash=issued.secret_hash, default_memory=default_memory,
        read_only=read_only, expires_at=expires_at,
        memory_ids=None if memories is None else sorted({m.pk for m in memories}),
    )
    account_event(account_id=account.pk, actor_id=actor_id or holder.pk, action="key.created",
                  object_id=key.pk, after={**_key_summary(key), **key_limits(key)})
    record_security_event(user=holder, kind=KEY_CREATED, detail={"key": str(key)})
    return key, issued.plaintext


def key_limits(key: ApiKey) -> dict[str, object]:
    """A key's limits as the audit log records them."""
    return {"read_only": key.read_only, "memory_ids": key.memory_ids,
            "expires_at": key.expires_at.isoformat() if key.expires_at else None}


@transaction.atomic
def api_key_revoke(*, key: ApiKey, actor_id: int | None = None) -> ApiKey:
    """Revoke once; the event names who did it (None: the server, e.g. a removed member's)."""
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        revoked = ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(
            revoked_at=key.revoked_at)
        if revoked:
            account_event(account_id=key.account_id, actor_id=actor_id, action="key.revoked",
                          object_id=key.pk, after=_key_summary(key))
            # Refused at once in this process; the others read the row again within
            # key_cache.TTL_SECONDS. Forgotten again after the commit: a request of this
            # process may read the row, still live, before the commit.
            key_cache.forget(key.prefix)
            transaction.on_commit(lambda: key_cache.forget(key.prefix))
    return key


def api_key_rate_limit_set(*, key: ApiKey, requests_per_minute: int | None,
                           actor_id: int | None = None) -> ApiKey:
    """Give a key its own requests a minute (None: the box's default again). Only a
    self-hosted box's operator may: the hosted service keeps each plan's rate. The key's
    next request in this process uses it; other processes within key_cache.TTL_SECONDS."""
    if not settings.SELF_HOSTED:
        raise Forbidden("a key's own rate limit is for self-hosted boxes; the hosted service "
                        "keeps each plan's rate", field="requests_per_minute",
                        fix="run the server with ECHO_MEMORY_SELF_HOSTED=1, or change the "
                            "account's plan")
    if requests_per_minute is not None and not 1 <= requests_per_minute <= KEY_RATE_MAX:
        raise ValidationFailed(
            f"{requests_per_minute} is not a rate limit", field="requests_per_minute",
            fix=f"give a whole number of requests a minute from 1 to {KEY_RATE_MAX:,}, or "
                "none for the default")
    with transaction.atomic():
        before = ApiKey.objects.select_for_update().get(pk=key.pk).requests_per_minute
        if before != requests_per_minute:
            ApiKey.objects.filter(pk=key.pk).update(requests_per_minute=requests_per_minute)
            account_event(account_id=key.account_id, actor_id=actor_id,
                          action="key.rate_limit_changed", object_id=key.pk,
                          after={**_key_summary(key), "requests_per_minute": {
                              "from": before, "to": requests_per_minute}})
            key_cache.forget(key.prefix)
            transaction.on_commit(lambda: key_cache.forget(key.prefix))
    key.requests_per_minute = requests_per_minute
    return key


KEY_DEFAULT_MOVED = "key.default_memory_changed"


@transaction.atomic
def api_key_move(*, key: ApiKey, to: models.Model, actor_id: int | None, why: str) -> ApiKey:
    """Point a live key's default memory (where its calls naming no memory read and write)
    at `to`, a memory of the key's account; the event says from where, to where and why."""
    if to.account_id != key.account_id:
        raise ValidationFailed("the memory belongs to another account", field="move_to",
                               fix="pick a memory of this account")
    # The engine's Memory, reached through the key's foreign key: tenancy imports no engine.
    memories = ApiKey._meta.get_field("default_memory").related_model
    before = (memories.objects.filter(pk=key.default_memory_id).values_list("name", flat=True)
              .first())
    # A key limited to memories keeps its default among them: the person chose `to`.
    if key.memory_ids is not None and to.pk not in key.memory_ids:
        key.memory_ids = sorted({*key.memory_ids, to.pk})
    ApiKey.objects.filter(pk=key.pk).update(default_memory=to, memory_ids=key.memory_ids)
    key.default_memory = to
    account_event(account_id=key.account_id, actor_id=actor_id, action=KEY_DEFAULT_MOVED,
                  object_id=key.pk, after={**_key_summary(key), "from": before,
                                           "to": to.name, "why": why})
    # As for a revocation: this process at once, the others within key_cache.TTL_SECONDS.
    key_cache.forget(key.prefix)
    transaction.on_commit(lambda: key_cache.forget(key.prefix))
    return key


def _key_summary(key: ApiKey) -> dict[str, object]:
    return {"key": f"em_{key.prefix}_…", "name": key.name, "tool": key.tool,
            "holder": key.holder_id}


def revocable_key(*, principal, role: str, key_id: int) -> ApiKey:
    """A live key of the principal's account that they may revoke: members their own keys,
    owners and admins any. Another account's key is NotFound, like a missing one."""
    key = (ApiKey.objects.filter(pk=key_id, account_id=principal.account_id,
                                 revoked_at__isnull=True).select_related("holder").first())
    if key is None:
        raise NotFound("there is no such API key in this account", field="key",
                       fix="pick a key from the list of this account's keys")
    if role == Membership.Role.MEMBER and key.holder_id != principal.holder_id:
        raise Forbidden("members may revoke only their own keys", field="key",
                        fix="ask an owner or admin of the account to revoke it")
    return key
