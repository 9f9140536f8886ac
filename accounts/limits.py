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

from collections.abc import Iterable
from datetime import UTC, datetime

from echomem.errors import AuthenticationFailed, Forbidden

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
