"""Deleting a memory or a whole account: every row of it goes, and its text leaves the
audit trail too.

The one erasure path (DESIGN, "People in the browser"): the memory's graph rows,
vectors, statistics and recall saves are deleted; its audit events stay, in sequence,
with their text and salt erased in place (audit/erase.py, chain format 2); one
`memory.deleted` event, appended last, accounts for them. The forget tool
(memories/erasure/forget.py) erases the same way, event by event, through `erase_object_events`,
and its `memory.forgotten` event lists the seqs it erased.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection, models, transaction

from accounts.models import Account, ApiKey, Membership
from accounts.principal import Principal
from accounts.services import api_key_move, api_key_revoke
from audit.chain import ACCOUNT_PARTITION, MEMORY_DELETED, Change, record
from audit.erase import erase_memory_events
from echomem.errors import Forbidden, NotFound, ValidationFailed
from memories.graph.selectors import memory_for
from memories.models import Entity, Episode, Fact, Memory

MAY_DELETE = {Membership.Role.OWNER, Membership.Role.ADMIN}


@dataclass(frozen=True)
class KeysDecision:
    """What the person chose for the live keys whose default is the memory being deleted.

    `key_ids` are the keys they were shown: a key that took the memory as its default since
    is not covered, and the deletion is refused until they choose for it too. `move_to` is
    the memory those keys use from now on; None revokes them.
    """

    key_ids: frozenset[int]
    move_to: str | None = None


def keys_defaulting_to(memory: Memory):
    """The live keys whose calls that name no memory read and write `memory`."""
    return (ApiKey.objects.filter(account_id=memory.account_id, default_memory=memory,
                                  revoked_at__isnull=True)
            .select_related("holder").order_by("pk"))


def memory_delete(principal: Principal, name: str, *, confirm: str,
                  keys: KeysDecision | None = None) -> dict[str, Any]:
    """Delete the memory `name` of the principal's account; `confirm` must repeat the name.

    A key whose default is this memory would otherwise write to the account's default from
    then on, without anyone having said so: while such keys are live the deletion is
    refused unless `keys` says what happens to each (revoked, or moved to another memory),
    and each key's fate is in the audit log."""
    if confirm != name:
        raise ValidationFailed(f"type the memory's name, {name!r}, to confirm its deletion",
                               field="confirm", fix=f"enter exactly {name!r}")
    require_owner_or_admin(member_role(principal), doing="delete a memory")
    with transaction.atomic():
        memory = memory_for(principal, name)
        if Account.objects.filter(pk=principal.account_id, default_memory=memory).exists():
            raise ValidationFailed(
                f"{name!r} is the account's default memory, where calls naming no memory go",
                field="memory", fix="make another memory the default first, then delete this one")
        # Writers to this memory wait for us, then find it gone.
        Memory.objects.select_for_update().filter(pk=memory.pk).exists()
        settled = _settle_keys(principal, memory, keys)
        counted = {label: model.objects.filter(memory_id=memory.pk).count()
                   for label, model in (("entities", Entity), ("facts", Fact),
                                        ("episodes", Episode))}
        _delete_rows_of(memory)
        erased = erase_memory_events(account_id=memory.account_id, memory_id=memory.pk)
        record(actor=principal, memory=memory, partition=ACCOUNT_PARTITION,
               session_id="", changes=[Change(MEMORY_DELETED, str(memory.pk), before={
                   "name": memory.name, **counted, "audit_events_erased": erased,
                   **settled})])
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memories_memory WHERE id = %s", [memory.pk])
    return {"deleted": memory.name, **counted, "audit_events_erased": erased, **settled}


def _settle_keys(principal: Principal, memory: Memory,
                 decision: KeysDecision | None) -> dict[str, Any]:
    """Revoke or move the live keys whose default is `memory`, as the person chose; refuse
    when any of them was not part of the choice. Locked, so none appears meanwhile."""
    live = list(keys_defaulting_to(memory).select_for_update(of=("self",)))
    if not live:
        return {}
    unchosen = [key for key in live if decision is None or key.pk not in decision.key_ids]
    if unchosen:
        listed = ", ".join(f"{key.name} (em_{key.prefix}_…, {key.tool})" for key in unchosen)
        which = "a live key uses" if len(unchosen) == 1 else f"{len(unchosen)} live keys use"
        raise ValidationFailed(
            f"{which} {memory.name!r} as default memory: {listed}; deleting it would send "
            "their writes to another memory without anyone choosing it",
            field="keys", fix="choose for these keys: revoke them, or move them to another "
                              "memory you pick (the delete page asks), then delete")
    if decision.move_to is None:
        for key in live:
            api_key_revoke(key=key, actor_id=principal.holder_id)
        return {"keys_revoked": [key.pk for key in live]}
    try:
        target = memory_for(principal, decision.move_to)
    except NotFound as missing:  # a choice made on a page loaded before it was deleted
        raise ValidationFailed(missing.message, field="move_to",
                               fix="pick one of this account's memories") from None
    # Not deleted under the keys while they move to it.
    Memory.objects.select_for_update().filter(pk=target.pk).exists()
    if target.pk == memory.pk:
        raise ValidationFailed(f"the keys cannot move to {memory.name!r}: it is the memory "
                               "being deleted", field="move_to",
                               fix="pick another memory of this account")
    for key in live:
        api_key_move(key=key, to=target, actor_id=principal.holder_id,
                     why=f"memory {memory.name!r} was deleted")
    return {"keys_moved": [key.pk for key in live], "keys_moved_to": target.name}


def account_delete(principal: Principal, *, confirm: str) -> dict[str, Any]:
    """Delete the principal's whole account: every memory's rows as `memory_delete` removes
    them, then its audit chain, keys, invitations and memberships. Only an owner may, and
    `confirm` must repeat the account's name. The people stay users (of other accounts)."""
    if member_role(principal) != Membership.Role.OWNER:
        raise Forbidden("only an owner of the account may delete it", field="account",
                        fix="ask an owner of this account")
    with transaction.atomic():
        account = Account.objects.select_for_update().filter(pk=principal.account_id).first()
        if account is None or confirm != account.name:
            raise ValidationFailed("type the account's name to confirm its deletion",
                                   field="confirm", fix=f"enter exactly {account.name!r}"
                                   if account else "reload the page")
        memories = list(Memory.objects.filter(account_id=account.pk))
        counted = {"memories": len(memories),
                   "facts": Fact.objects.filter(memory__account_id=account.pk).count()}
        for memory in memories:
            _delete_rows_of(memory)
        with connection.cursor() as cursor:
            # The one sanctioned way to delete audit events: the whole account's chain.
            cursor.execute("SET LOCAL echo_memory.erasing_account = 'on'")
            cursor.execute("DELETE FROM memories_auditevent WHERE account_id = %s", [account.pk])
            cursor.execute("SET LOCAL echo_memory.erasing_account = 'off'")
            cursor.execute("UPDATE accounts_account SET default_memory_id = NULL WHERE id = %s",
                           [account.pk])
            cursor.execute("DELETE FROM memories_memory WHERE account_id = %s", [account.pk])
        account.delete()
    return {"deleted": account.name, **counted}


def member_role(principal: Principal) -> str | None:
    return (Membership.objects.filter(account_id=principal.account_id,
                                      user_id=principal.holder_id)
            .values_list("role", flat=True).first())


def require_owner_or_admin(role: str | None, *, doing: str = "delete a memory") -> None:
    if role not in MAY_DELETE:
        raise Forbidden(f"only an owner or an admin of the account may {doing}",
                        field="memory", fix="ask an owner or admin of this account")


def _delete_rows_of(memory: Memory) -> None:
    """Every row that points at the memory, found from the models, so a table added later
    is covered; rows that others refer to go after those others."""
    with connection.cursor() as cursor:
        # include_hidden: relations declared with related_name="+" are still rows of it.
        pointing = [field for field in Memory._meta.get_fields(include_hidden=True)
                    if field.auto_created and not field.concrete
                    and (field.one_to_many or field.one_to_one)]
        # A table a later migration adds is absent while an older box is being migrated
        # (migrations' data steps and their tests delete as the box did then).
        tables = set(connection.introspection.table_names(cursor))
        for relation in _referrers_first(pointing):
            table = relation.related_model._meta.db_table
            if table not in tables:
                continue
            column = relation.field.column
            if relation.on_delete is models.CASCADE:
                cursor.execute(f'DELETE FROM "{table}" WHERE "{column}" = %s', [memory.pk])
            elif relation.on_delete is models.SET_NULL:
                cursor.execute(f'UPDATE "{table}" SET "{column}" = NULL WHERE "{column}" = %s',
                               [memory.pk])
            elif relation.on_delete is not models.DO_NOTHING:
                raise NotImplementedError(f"{table}.{column}: say how deleting a memory "
                                          "treats it")


def _referrers_first(relations):
    remaining = list(relations)
    while remaining:
        for relation in remaining:
            model = relation.related_model
            if not any(field.related_model is model for other in remaining
                       if other.related_model is not model
                       for field in other.related_model._meta.concrete_fields
                       if field.many_to_one):
                remaining.remove(relation)
                yield relation
                break
        else:
            raise NotImplementedError("models referring to each other in a cycle: "
                                      f"{[r.related_model.__name__ for r in remaining]}")
