"""The audit trail: written in the same transaction as the change it records.

Each account's events form a hash chain: hash = SHA-256 of the previous hash and the
event's canonical JSON. The chain head's row lock is the last lock a write takes, so
concurrent writers append in commit order without deadlocking.

Chain format 2 makes text erasable without breaking the chain. An event commits to
its metadata and to `payload_digest` = SHA-256(salt + canonical JSON of before/after),
never to the text itself. Erasing (deleting a memory, forgetting facts, entities,
episodes or notes) nulls before, after and the salt in place, through the one UPDATE the
append-only trigger allows (`ERASE`); the digest stays, so the chain verifies, and without
the salt the digest cannot be used to confirm a guessed text. Verification checks
every remaining payload against its digest, and refuses an erased event that no later
erasure event accounts for: a `memory.deleted` of its memory (every event of the memory
before it), or a `memory.forgotten` (or `secrets.erased`) of its memory whose payload
lists its seq (the forget tool erases only the events that carry the forgotten objects'
text, memories/erasure/forget.py; migration 0018 those that held a secret).
Format 1 (hashing before/after directly) is what chains written before migration 0008
used; that migration verified and converted them.

Format 3 (events written since migration 0018) moves the event's `session_id` from the
metadata into the salted payload digest: it is the agent's free text too, so erasure
blanks it with the before/after. Events of formats 1 and 2 stay as they are; one chain
holds events of several formats, each checked by its own rule. Migration 0018 resealed
the events whose session_id held a secret as format 3, so that it could erase it
(memories/erasure/stored_secrets.py).

The chain is written here (`record`, the one call every app makes to record a change),
checked in audit/verify.py and erased in audit/erase.py. It knows no other app: who acted
and in which memory come in as ids and a name.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Protocol

from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from audit.models import AuditEvent
from echomem import bulk

GENESIS = "0" * 64
FORMAT = 3
# The events that account for erased events: `memory.deleted` for every event of its
# memory before it; `memory.forgotten` for the seqs its payload lists under ERASED_SEQS.
MEMORY_DELETED = "memory.deleted"
MEMORY_FORGOTTEN = "memory.forgotten"
ERASED_SEQS = "erased_seqs"
# Secrets found in stored events (migration 0018) are erased like forgotten facts: the
# event lists the seqs it erased.
SECRETS_ERASED = "secrets.erased"
LISTING_ERASURES = frozenset({MEMORY_FORGOTTEN, SECRETS_ERASED})
ERASURE_ACTIONS = frozenset({MEMORY_DELETED, *LISTING_ERASURES})
# A recall save's event names its fact in `after.fact_id` (and its note may quote it).
RECALL_SAVED = "recall_save.recorded"
# Account-level events (team, keys, memories' lifecycle) carry no graph partition, so the
# agents' get_audit_log, which reads one partition of one memory, never lists them.
ACCOUNT_PARTITION = ""


@dataclass(frozen=True)
class Change:
    action: str
    object_id: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


class Actor(Protocol):
    """Who made a change, as the chain records it (accounts' Principal is one)."""

    @property
    def account_id(self) -> int: ...
    @property
    def holder_id(self) -> int | None: ...
    @property
    def tool(self) -> str: ...
    @property
    def key_id(self) -> int | None: ...


class InMemory(Protocol):
    """The memory a change is in: its id, and its name, which the event keeps."""

    @property
    def pk(self) -> Any: ...
    @property
    def name(self) -> str: ...


def _canonical(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _metadata(event: AuditEvent) -> dict[str, Any]:
    return {
        "account": event.account_id, "seq": event.seq, "memory": event.memory_id,
        "memory_name": event.memory_name, "partition": event.partition,
        "action": event.action, "object_id": event.object_id,
        "session_id": event.session_id, "holder": event.holder_id, "tool": event.tool,
        "key": event.key_id, "created_at": event.created_at.isoformat(),
    }


def payload_digest(salt: str, before: Any, after: Any) -> str:
    """Format 2's payload: before and after."""
    body = _canonical({"before": before, "after": after})
    return hashlib.sha256((salt + body).encode()).hexdigest()


def payload_digest_v3(salt: str, before: Any, after: Any, session_id: str) -> str:
    """Format 3's payload: before, after and the session id."""
    body = _canonical({"before": before, "after": after, "session_id": session_id})
    return hashlib.sha256((salt + body).encode()).hexdigest()


def digest_v1(prev_hash: str, event: AuditEvent) -> str:
    """Format 1: the text itself is hashed (kept to verify chains before converting them)."""
    body = _canonical({**_metadata(event), "before": event.before, "after": event.after})
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


def digest_v2(prev_hash: str, event: AuditEvent) -> str:
    body = _canonical({**_metadata(event), "format": 2, "payload": event.payload_digest})
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


def digest_v3(prev_hash: str, event: AuditEvent | NewEvent) -> str:
    metadata = _metadata(event)
    del metadata["session_id"]  # committed to by the payload digest
    body = _canonical({**metadata, "format": 3, "payload": event.payload_digest})
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


def chain_digest(prev_hash: str, event: AuditEvent | NewEvent) -> str:
    """The event's hash in its own format."""
    return {1: digest_v1, 2: digest_v2, 3: digest_v3}[event.format](prev_hash, event)


def seal(event: AuditEvent, prev_hash: str) -> str:
    """Give an event converted to format 2 a salt, its payload digest and its hash
    (migration 0008)."""
    event.format = 2
    event.salt = secrets.token_hex(16)
    event.payload_digest = payload_digest(event.salt, event.before, event.after)
    event.prev_hash = prev_hash
    event.hash = digest_v2(prev_hash, event)
    return event.hash


@dataclass(slots=True)
class NewEvent:
    """An event being appended: what the chain hashes and the row stores. A write appends
    one per fact, and a model instance each cost more than sealing it."""

    account_id: int
    seq: int
    memory_id: int | None
    memory_name: str
    partition: str
    action: str
    object_id: str
    session_id: str
    holder_id: int | None
    tool: str
    key_id: int | None
    before: Any
    after: Any
    created_at: datetime | None  # set when appended
    before_text: str | None = None
    after_text: str | None = None
    prev_hash: str = ""
    hash: str = ""
    format: int = FORMAT
    salt: str = ""
    payload_digest: str = ""


# Every column a new event's row fills: NewEvent's fields that the model has.
_STORED = [f.name for f in fields(NewEvent)
           if f.name in {c.column for c in AuditEvent._meta.concrete_fields}]


def _row(event: NewEvent) -> dict[str, Any]:
    """The event as its row: the payloads as their JSON text, which the row casts."""
    row = {name: getattr(event, name) for name in _STORED}
    row["before"], row["after"] = event.before_text, event.after_text
    return row


def _stored(value: Any) -> tuple[Any, str | None]:
    """JSON-safe and stable, and its text: what is hashed is exactly what the row will
    read back as (a datetime as its ISO text, a UUID as its string)."""
    if value is None:
        return None, None
    text = json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)
    return json.loads(text), text


def record(
    *, actor: Actor, memory: InMemory | None, partition: str, session_id: str,
    changes: list[Change],
) -> list[NewEvent]:
    """Append `changes` to the account's chain; call inside the change's transaction.
    Every app records its changes through this (or, to prepare the events before the
    chain is locked, `new_events` then `append`).

    `memory` is None for an account-level event (a key, a member), which is in no memory."""
    return append(new_events(actor=actor, memory=memory, partition=partition,
                             session_id=session_id, changes=changes))


def new_events(
    *, actor: Actor, memory: InMemory | None, partition: str, session_id: str,
    changes: list[Change],
) -> list[NewEvent]:
    """`changes` as events with their payloads stored, salted and digested, not yet in the
    chain (`append` gives them their place). Reads nothing from the database, so a write
    prepares them while the server stores its rows."""
    events = []
    for change in changes:
        before, before_text = _stored(change.before)
        after, after_text = _stored(change.after)
        salt = secrets.token_hex(16)
        events.append(NewEvent(
            account_id=actor.account_id, seq=0,
            memory_id=memory.pk if memory is not None else None,
            memory_name=memory.name if memory is not None else "",
            partition=partition, action=change.action,
            object_id=change.object_id, session_id=session_id,
            holder_id=actor.holder_id, tool=actor.tool, key_id=actor.key_id,
            before=before, after=after, created_at=None,
            before_text=before_text, after_text=after_text,
            salt=salt, payload_digest=payload_digest_v3(salt, before, after, session_id),
        ))
    return events


def append(events: list[NewEvent]) -> list[NewEvent]:
    """Put events of one account (from `new_events`) at the end of its chain, in order;
    call inside the change's transaction."""
    if not events:
        return []
    account_id = events[0].account_id
    # Creates the head on an account's first event, else locks it (the no-op update
    # takes the row lock) and reads it, in one statement.
    (seq, prev), = bulk.execute(
        "INSERT INTO memories_auditchainhead (account_id, seq, hash) VALUES (%s, 0, %s) "
        "ON CONFLICT (account_id) DO UPDATE SET seq = memories_auditchainhead.seq "
        "RETURNING seq, hash", [account_id, GENESIS],
    )
    # Stamped under the head's lock, so an account's events are in time order by seq.
    now = timezone.now()
    for event in events:
        seq += 1
        event.seq, event.created_at, event.prev_hash = seq, now, prev
        event.hash = prev = digest_v3(prev, event)
    bulk.execute(*bulk.combine([
        bulk.Statement("UPDATE memories_auditchainhead SET seq = %s, hash = %s "
                       "WHERE account_id = %s", [seq, prev, account_id]),
        bulk.insert_statement(AuditEvent, [_row(e) for e in events],
                              casts={"before": "text", "after": "text"}),
    ]))
    return events
