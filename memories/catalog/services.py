"""Changes to a memory as a whole, made by a person: rename it, make it the account's
default. Owners and admins only; each is recorded in the account's audit chain."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts.models import Account, ApiKey
from accounts.principal import Principal
from audit.chain import ACCOUNT_PARTITION, Change, record
from echomem.errors import ValidationFailed
from memories.erasure.services import member_role, require_owner_or_admin
from memories.graph.selectors import memory_for
from memories.models import MEMORY_NAME_RULE, Memory, memory_name_validator

MEMORY_RENAMED = "memory.renamed"
DEFAULT_CHANGED = "account.default_memory_changed"


def memory_rename(principal: Principal, name: str, *, new_name: str) -> Memory:
    """Agents that pass the old name are refused from now on (with the list of names), so
    the page that calls this says so before the person confirms."""
    require_owner_or_admin(member_role(principal), doing="rename a memory")
    try:
        memory_name_validator(new_name)
    except ValidationError:
        raise ValidationFailed(f"memory name {new_name!r} is not allowed", field="new_name",
                               fix=f"use {MEMORY_NAME_RULE}, for example 'support-bot'") from None
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory_for(principal, name).pk)
        if new_name == memory.name:
            return memory
        try:
            with transaction.atomic():
                Memory.objects.filter(pk=memory.pk).update(name=new_name)
        except IntegrityError:
            raise ValidationFailed(
                f"a memory named {new_name!r} already exists in this account",
                field="new_name", fix="choose another name") from None
        record(actor=principal, memory=memory, partition=ACCOUNT_PARTITION,
               session_id="", changes=[Change(MEMORY_RENAMED, str(memory.pk),
                                              before={"name": name},
                                              after={"name": new_name})])
        memory.name = new_name
    return memory


def memory_make_default(principal: Principal, name: str) -> Memory:
    """Calls that name no memory, from keys that name none, go here from now on."""
    require_owner_or_admin(member_role(principal), doing="change the account's default memory")
    with transaction.atomic():
        account = Account.objects.select_for_update().get(pk=principal.account_id)
        memory = memory_for(principal, name)
        if account.default_memory_id == memory.pk:
            return memory
        previous = (Memory.objects.filter(pk=account.default_memory_id)
                    .values_list("name", flat=True).first())
        Account.objects.filter(pk=account.pk).update(default_memory=memory)
        # The keys whose writes follow: the page says how many, and so does the log.
        following = keys_following_the_account_default(principal.account_id)
        record(actor=principal, memory=memory, partition=ACCOUNT_PARTITION,
               session_id="", changes=[Change(DEFAULT_CHANGED, str(memory.pk),
                                              before={"default_memory": previous},
                                              after={"default_memory": memory.name,
                                                     "keys_following": following})])
    return memory


def keys_following_the_account_default(account_id: int) -> int:
    """Live keys that name no default memory of their own: they use the account's."""
    return ApiKey.objects.filter(account_id=account_id, default_memory__isnull=True,
                                 revoked_at__isnull=True).count()
