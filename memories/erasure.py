"""Deleting a memory: every row of it goes, and its text leaves the audit trail too.

The one erasure path (DESIGN, "People in the browser"): the memory's graph rows,
vectors, statistics and recall saves are deleted; its audit events stay, in sequence,
with their text and salt erased in place (memories/audit.py, chain format 2); one
`memory.deleted` event, appended last, accounts for them. The engine's forget tool and
account deletion are meant to reuse `erase_memory_events` the same way.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, models, transaction

from accounts.models import Membership
from accounts.principal import Principal
from echomem.errors import Forbidden, ValidationFailed
from memories.audit import (
    ACCOUNT_PARTITION,
    MEMORY_DELETED,
    Change,
    audit_record,
    erase_memory_events,
)
from memories.models import Entity, Episode, Fact, Memory
from memories.selectors import memory_for

MAY_DELETE = {Membership.Role.OWNER, Membership.Role.ADMIN}


def memory_delete(principal: Principal, name: str, *, confirm: str) -> dict[str, Any]:
    """Delete the memory `name` of the principal's account; `confirm` must repeat the name."""
    if confirm != name:
        raise ValidationFailed(f"type the memory's name, {name!r}, to confirm its deletion",
                               field="confirm", fix=f"enter exactly {name!r}")
    require_owner_or_admin(_role(principal))
    with transaction.atomic():
        memory = memory_for(principal, name)
        # Writers to this memory wait for us, then find it gone.
        Memory.objects.select_for_update().filter(pk=memory.pk).exists()
        counted = {label: model.objects.filter(memory_id=memory.pk).count()
                   for label, model in (("entities", Entity), ("facts", Fact),
                                        ("episodes", Episode))}
        _delete_rows_of(memory)
        erased = erase_memory_events(account_id=memory.account_id, memory_id=memory.pk)
        audit_record(principal=principal, memory=memory, partition=ACCOUNT_PARTITION,
                     session_id="", changes=[Change(MEMORY_DELETED, str(memory.pk), before={
                         "name": memory.name, **counted, "audit_events_erased": erased})])
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memories_memory WHERE id = %s", [memory.pk])
    return {"deleted": memory.name, **counted, "audit_events_erased": erased}


def _role(principal: Principal) -> str | None:
    return (Membership.objects.filter(account_id=principal.account_id,
                                      user_id=principal.holder_id)
            .values_list("role", flat=True).first())


def require_owner_or_admin(role: str | None) -> None:
    if role not in MAY_DELETE:
        raise Forbidden("only an owner or an admin of the account may delete a memory",
                        field="memory", fix="ask an owner or admin of this account")


def _delete_rows_of(memory: Memory) -> None:
    """Every row that points at the memory, found from the models, so a table added later
    is covered; rows that others refer to go after those others."""
    with connection.cursor() as cursor:
        # include_hidden: relations declared with related_name="+" are still rows of it.
        pointing = [field for field in Memory._meta.get_fields(include_hidden=True)
                    if field.auto_created and not field.concrete
                    and (field.one_to_many or field.one_to_one)]
        for relation in _referrers_first(pointing):
            table = relation.related_model._meta.db_table
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
