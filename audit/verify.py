"""Checking an account's audit chain: every link, every remaining payload against its
digest, and every erased event accounted for by a later erasure event (audit/chain.py
says what each chain format commits to)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from audit.chain import (
    ERASED_SEQS,
    GENESIS,
    LISTING_ERASURES,
    MEMORY_DELETED,
    chain_digest,
    digest_v1,
    payload_digest,
    payload_digest_v3,
)
from audit.models import AuditChainHead, AuditEvent


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
