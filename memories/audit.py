"""The audit trail: written in the same transaction as the change it records.

Each account's events form a hash chain (hash = SHA-256 of the previous hash and
the event's canonical JSON). The chain head's row lock is the last lock a write
takes, so concurrent writers append in commit order without deadlocking.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from accounts.models import Account
from accounts.principal import Principal
from echomem.errors import NotFound
from memories import bulk
from memories.models import AuditChainHead, AuditEvent, Memory

GENESIS = "0" * 64
EVENT_COLUMNS = [
    ("account_id", "bigint"), ("seq", "bigint"), ("memory_id", "bigint"),
    ("memory_name", "text"), ("partition", "text"), ("action", "text"), ("object_id", "text"),
    ("session_id", "text"), ("holder_id", "bigint"), ("tool", "text"), ("key_id", "bigint"),
    ("before", "text"), ("after", "text"), ("created_at", "timestamptz"),
    ("prev_hash", "text"), ("hash", "text"),
]


@dataclass(frozen=True)
class Change:
    action: str
    object_id: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


def _plain(value: Any) -> Any:
    """JSON-safe and stable: what is hashed is exactly what the row will read back as."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder)) if value is not None else None


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _digest(prev_hash: str, event: AuditEvent) -> str:
    body = json.dumps({
        "account": event.account_id, "seq": event.seq, "memory": event.memory_id,
        "memory_name": event.memory_name, "partition": event.partition,
        "action": event.action, "object_id": event.object_id,
        "session_id": event.session_id, "holder": event.holder_id, "tool": event.tool,
        "key": event.key_id, "before": event.before, "after": event.after,
        "created_at": event.created_at.isoformat(),
    }, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


def audit_record(
    *, principal: Principal, memory: Memory, partition: str, session_id: str,
    changes: list[Change],
) -> list[AuditEvent]:
    """Append `changes` to the account's chain; call inside the change's transaction."""
    if not changes:
        return []
    # Creates the head on an account's first event, else locks it (the no-op update
    # takes the row lock) and reads it, in one statement.
    (seq, prev), = bulk.execute(
        "INSERT INTO memories_auditchainhead (account_id, seq, hash) VALUES (%s, 0, %s) "
        "ON CONFLICT (account_id) DO UPDATE SET seq = memories_auditchainhead.seq "
        "RETURNING seq, hash", [principal.account_id, GENESIS],
    )
    now = timezone.now()
    events = []
    for change in changes:
        seq += 1
        event = AuditEvent(
            account_id=principal.account_id, seq=seq, memory_id=memory.pk,
            memory_name=memory.name, partition=partition, action=change.action,
            object_id=change.object_id, session_id=session_id,
            holder_id=principal.holder_id, tool=principal.tool, key_id=principal.key_id,
            before=_plain(change.before), after=_plain(change.after), created_at=now,
            prev_hash=prev,
        )
        event.hash = prev = _digest(prev, event)
        events.append(event)
    bulk.execute(*bulk.combine([
        bulk.Statement("UPDATE memories_auditchainhead SET seq = %s, hash = %s "
                       "WHERE account_id = %s", [seq, prev, principal.account_id]),
        bulk.insert_statement("memories_auditevent", EVENT_COLUMNS, [
            (e.account_id, e.seq, e.memory_id, e.memory_name, e.partition, e.action,
             e.object_id, e.session_id, e.holder_id, e.tool, e.key_id, _json(e.before),
             _json(e.after), e.created_at, e.prev_hash, e.hash)
            for e in events
        ], casts={"before": "::jsonb", "after": "::jsonb"}),
    ]))
    return events


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
    """
    prev, expected_seq = after_hash, after_seq + 1
    for event in events:
        broken = event.seq != expected_seq or event.prev_hash != prev
        if broken or _digest(prev, event) != event.hash:
            return ChainCheck(False, expected_seq, expected_seq - 1, prev)
        prev, expected_seq = event.hash, expected_seq + 1
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
