"""The limits a Principal may carry, whatever credential it came from (a scoped key today,
an OAuth grant next): read only, the memories it may use, an expiry. Each has one check,
called where every call passes: expiry where a key becomes a Principal
(accounts.principal.principal_from_key), writing where a tool is called
(tools.calling), a memory where a call's memory is resolved
(memories.graph.selectors.memory_for). A refusal names the limit and how to get past it.

A key never creates keys or grants: keys are made in the dashboard or the admin site, by
a signed-in person, and nothing a Bearer credential reaches calls api_key_create.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from django.db import models

from echomem.errors import AuthenticationFailed, Forbidden, ValidationFailed

READ_ONLY_FIX = ("use a key without the read-only limit for this tool (create one in the "
                 "dashboard), or call only tools that read")


def credential(principal) -> str:
    if principal.key_id is not None:
        return "this key"
    return "this connection" if principal.connection_id is not None else "this credential"


def refuse_if_read_only(principal, *, tool: str) -> None:
    if principal.read_only:
        raise Forbidden(f"{credential(principal)} is read-only: {tool} writes, erases or "
                        "records, so it is refused", field="key", fix=READ_ONLY_FIX)


def may_use_memory(principal, memory_id: int) -> bool:
    return principal.memory_ids is None or memory_id in principal.memory_ids


def memory_refusal(principal, allowed_names: Iterable[str]) -> Forbidden:
    listed = ", ".join(sorted(allowed_names)) or "none (every one it had was deleted)"
    return Forbidden(f"{credential(principal)} may use only the memories {listed}",
                     field="memory", fix="name one of those memories (or leave memory out for "
                                         "the key's default), or use a key limited to the "
                                         "memory you need")


def refuse_if_expired(expires_at: datetime | None, now: datetime) -> None:
    """A key works until the second before expires_at; at and after it, refused."""
    if expires_at is not None and now >= expires_at:
        raise AuthenticationFailed(
            f"this key expired on {expires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC",
            field="Authorization",
            fix="create a new key in the dashboard (with a later expiry date, or none) and "
                "give it to the agent")


def check_memory_choice(*, account_id: int, memories: Sequence[models.Model] | None,
                        default_memory: models.Model | None, holder: str) -> None:
    """The memories a key or a connection (`holder`: "key", "app") may use, as its maker
    chose them: None is every memory; else at least one, all of this account, the default
    among them. A memory is the engine's; tenancy imports no engine, so it is a model here."""
    if default_memory is not None and default_memory.account_id != account_id:
        raise ValidationFailed("the default memory belongs to another account",
                               field="default_memory", fix="pick a memory of this account")
    if memories is None:
        return
    if not memories:
        raise ValidationFailed(f"a {holder} limited to memories needs at least one",
                               field="memories",
                               fix=f"tick the memories the {holder} may use, or none for all")
    if any(memory.account_id != account_id for memory in memories):
        raise ValidationFailed("a chosen memory belongs to another account",
                               field="memories", fix="pick memories of this account")
    if default_memory is None or default_memory.pk not in {m.pk for m in memories}:
        raise ValidationFailed(
            f"the {holder}'s default memory must be one of the memories it may use",
            field="default_memory",
            fix="pick the default among the ticked memories (calls that name no memory go "
                "there)")
