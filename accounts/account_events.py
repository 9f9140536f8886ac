"""Account-level events (a key, a member, a role, a memory's lifecycle) as tenancy records
them in the account's audit chain: no graph partition, no session."""

from __future__ import annotations

from typing import Any

from accounts.principal import Principal
from audit.chain import ACCOUNT_PARTITION, Change, InMemory, NewEvent, record


def account_event(
    *, account_id: int, actor_id: int | None, action: str, object_id: object,
    after: dict[str, Any], memory: InMemory | None = None, tool: str = "",
    key_id: int | None = None,
) -> NewEvent:
    """Record one account-level event (`member.joined`, `key.revoked`, ...) in the account's
    chain; call inside the change's transaction. `after` says who/what in a few fields.
    An event about a memory names it, so deleting the memory erases this text too."""
    actor = Principal(account_id=account_id, holder_id=actor_id, tool=tool, key_id=key_id)
    event, = record(actor=actor, memory=memory, partition=ACCOUNT_PARTITION, session_id="",
                    changes=[Change(action, str(object_id), after=after)])
    return event
