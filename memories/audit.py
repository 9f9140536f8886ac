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
"""

from __future__ import annotations

import hashlib
import json
import secrets
from array import array
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.utils import timezone

from accounts.models import Account
from accounts.principal import Principal
from echomem.errors import NotFound
from memories.core import bulk
from memories.models import AuditChainHead, AuditEvent, Memory

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


def _intact(prev_hash: str, event: AuditEvent) -> bool:
    if event.format == 1:
        return digest_v1(prev_hash, event) == event.hash
    if event.format not in (2, 3) or chain_digest(prev_hash, event) != event.hash:
        return False
    if event.salt is None:
        # Erased: no text left, and in format 3 no session id (nothing commits to it).
        return (event.before is None and event.after is None and event.erased_at is not None
                and (event.format == 2 or event.session_id == ""))
    if event.format == 2:
        return payload_digest(event.salt, event.before, event.after) == event.payload_digest
    return payload_digest_v3(event.salt, event.before, event.after,
                             event.session_id) == event.payload_digest


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


def audit_record(
    *, principal: Principal, memory: Memory | None, partition: str, session_id: str,
    changes: list[Change],
) -> list[NewEvent]:
    """Append `changes` to the account's chain; call inside the change's transaction.

    `memory` is None for an account-level event (a key, a member), which is in no memory."""
    return append(new_events(principal=principal, memory=memory, partition=partition,
                             session_id=session_id, changes=changes))


def new_events(
    *, principal: Principal, memory: Memory | None, partition: str, session_id: str,
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
            account_id=principal.account_id, seq=0,
            memory_id=memory.pk if memory is not None else None,
            memory_name=memory.name if memory is not None else "",
            partition=partition, action=change.action,
            object_id=change.object_id, session_id=session_id,
            holder_id=principal.holder_id, tool=principal.tool, key_id=principal.key_id,
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


def account_event(
    *, account_id: int, actor_id: int | None, action: str, object_id: object,
    after: dict[str, Any], memory: Memory | None = None, tool: str = "", key_id: int | None = None,
) -> NewEvent:
    """Record one account-level event (`member.joined`, `key.revoked`, ...) in the account's
    chain; call inside the change's transaction. `after` says who/what in a few fields.
    An event about a memory names it, so deleting the memory erases this text too."""
    principal = Principal(account_id=account_id, holder_id=actor_id, tool=tool, key_id=key_id)
    event, = audit_record(principal=principal, memory=memory, partition=ACCOUNT_PARTITION,
                          session_id="", changes=[Change(action, str(object_id), after=after)])
    return event


@dataclass(frozen=True)
class ChainCheck:
    """How far a chain verified: `broken_seq` is None when every event checked out."""

    ok: bool
    broken_seq: int | None
    last_seq: int
    last_hash: str


def verify_events(events: Iterable[AuditEvent], *, after_seq: int = 0,
                  after_hash: str = GENESIS) -> ChainCheck:
    """Check events in seq order, continuing a chain verified up to (after_seq, after_hash).

    Works on any AuditEvent instances, saved or built from raw rows, so a chain can be
    verified incrementally (the fuzz suite checks only what each request appended).
    An erased event must be followed, within the events read, by an erasure event of its
    memory that accounts for it (ERASURE_ACTIONS); otherwise the chain is broken at the
    first unaccounted one. A forget event's list counts only while its own payload is
    intact (checked above), so a list cannot be extended without breaking the chain there.
    """
    prev, expected_seq = after_hash, after_seq + 1
    # Memory id -> its erased seqs not yet accounted for, ascending. An array (8 bytes a
    # seq): a deleted memory's events all wait here until its memory.deleted comes.
    unaccounted: dict[int | None, array[int]] = {}
    for event in events:
        broken = event.seq != expected_seq or event.prev_hash != prev
        if broken or not _intact(prev, event):
            return ChainCheck(False, expected_seq, expected_seq - 1, prev)
        if event.format >= 2 and event.salt is None:
            unaccounted.setdefault(event.memory_id, array("q")).append(event.seq)
        if event.action == MEMORY_DELETED:
            unaccounted.pop(event.memory_id, None)
        elif event.action in LISTING_ERASURES and event.memory_id in unaccounted:
            listed = set((event.after or {}).get(ERASED_SEQS) or [])
            left = array("q", (seq for seq in unaccounted[event.memory_id]
                               if seq not in listed))
            if left:
                unaccounted[event.memory_id] = left
            else:
                del unaccounted[event.memory_id]
        prev, expected_seq = event.hash, expected_seq + 1
    if unaccounted:
        first = min(seqs[0] for seqs in unaccounted.values())
        return ChainCheck(False, first, first - 1, "")
    return ChainCheck(True, None, expected_seq - 1, prev)


def audit_verify(account_id: int, *, after_seq: int = 0,
                 after_hash: str = GENESIS) -> tuple[bool, int | None]:
    """(True, None) if the account's chain is intact, else (False, first broken seq).

    With `after_seq`/`after_hash` (a point already verified), only later events are read.
    """
    events = (AuditEvent.objects.filter(account_id=account_id, seq__gt=after_seq)
              .order_by("seq").iterator(chunk_size=2000))
    check = verify_events(events, after_seq=after_seq, after_hash=after_hash)
    if not check.ok:
        return False, check.broken_seq
    head = AuditChainHead.objects.filter(account_id=account_id).first()
    if head is not None and (head.seq != check.last_seq or head.hash != check.last_hash):
        return False, check.last_seq + 1  # rows after the last one we saw were removed
    return True, None


@dataclass(frozen=True)
class AccountChain:
    account_id: int
    account_name: str
    ok: bool
    broken_seq: int | None


def audit_verify_accounts(
    account_id: int | None = None, *,
    track: Callable[[list[tuple[int, str]]], Iterable[tuple[int, str]]] = iter,
) -> list[AccountChain]:
    """Verify one account's audit chain, or every account's in id order.

    `track` wraps the list of (id, name) being verified, e.g. in a progress bar.
    """
    accounts = Account.objects.order_by("pk")
    if account_id is not None:
        accounts = accounts.filter(pk=account_id)
    listed = list(accounts.values_list("pk", "name"))
    if account_id is not None and not listed:
        raise no_such_account(account_id)
    return [AccountChain(pk, name, *audit_verify(pk)) for pk, name in track(listed)]


def no_such_account(account_id: int) -> NotFound:
    return NotFound(f"there is no account {account_id}", field="--account",
                    fix="pass the id of an existing account, or omit --account")


def erase_memory_events(*, account_id: int, memory_id: int) -> int:
    """Erase the text of every event of one memory (call inside the deletion's transaction,
    which then records MEMORY_DELETED); how many were erased."""
    with _erasing() as cursor:
        cursor.execute(f"{ERASE} WHERE account_id = %s AND memory_id = %s AND salt IS NOT NULL",
                       [account_id, memory_id])
        return cursor.rowcount


def erase_object_events(*, account_id: int, memory_id: int, partition: str,
                        object_ids: list[str], fact_ids: list[str]) -> list[int]:
    """Erase the events of one partition that carry the text of these objects; their seqs,
    in order, for the MEMORY_FORGOTTEN event the caller records next, in the same
    transaction.

    An event carries an object's text when it is about the object (`object_id`: a fact's
    created / superseded / dates_repaired, an entity's created, a note's created /
    updated), or, for a recall save, when it names one of `fact_ids` (its note says what
    the fact saved, and the save itself is deleted with the fact). Events record the
    partition they were written in, which is the partition of the objects they carry, so
    the search stays on the audit_by_partition index.
    """
    if not object_ids and not fact_ids:
        return []
    with _erasing() as cursor:
        cursor.execute(
            f"{ERASE} WHERE account_id = %s AND memory_id = %s AND partition = %s "
            "AND salt IS NOT NULL AND (object_id = ANY(%s) "
            "OR (action = %s AND after ->> 'fact_id' = ANY(%s))) RETURNING seq",
            [account_id, memory_id, partition, object_ids, RECALL_SAVED, fact_ids])
        return sorted(row[0] for row in cursor.fetchall())


# The one UPDATE the append-only trigger allows (migrations 0008 and 0018): text and salt
# go (and, from format 3 on, the session id), nothing else about the event changes.
ERASE = ("UPDATE memories_auditevent SET before = NULL, after = NULL, salt = NULL, "
         "erased_at = now(), session_id = CASE WHEN format >= 3 THEN '' ELSE session_id END")


@contextmanager
def _erasing():
    """A cursor on the erasure path, switched on for the statements inside only."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_erasing', 'on', true)")
        yield cursor
        cursor.execute("SELECT set_config('echo_memory.audit_erasing', 'off', true)")
