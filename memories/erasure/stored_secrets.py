"""Secrets stored before redaction covered them, erased (migration 0018).

Until issue 37, record_recall_save stored its note and session_id as written, and the
rules missed some kinds (bare JWTs, AWS secret keys beside their id, `SECRET_KEY=...`...).
With each account's redactor (its own patterns too; nothing is touched in an account that
switched redaction off) this finds what is still stored, and:
- redacts in place the plain columns that keep an agent's notes and labels: a recall
  save's note and session_id, an episode's and a fact's session_id and project;
- erases, through the one sanctioned path (audit/erase.py's ERASE under the append-only trigger),
  every audit event whose before/after or session_id holds a secret, and records one
  `secrets.erased` event per memory listing their seqs, so the chain still verifies.

Format 2 commits to an event's session_id in its hash, so erasure cannot blank it there: an
event whose session_id holds a secret is first resealed as format 3 (the session id under
its salted payload digest; audit/chain.py), and the events after it are linked again. A chain
that does not verify beforehand is left alone and stops the migration (BrokenChain):
resealing it would launder whatever changed it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction

from accounts.models import Account
from accounts.principal import Principal
from audit.chain import (
    ACCOUNT_PARTITION,
    ERASED_SEQS,
    GENESIS,
    SECRETS_ERASED,
    Change,
    chain_digest,
    payload_digest_v3,
    record,
)
from audit.erase import ERASE, erasing
from audit.models import AuditChainHead, AuditEvent
from audit.verify import audit_verify
from memories.models import Episode, Fact, Memory, RecallSave
from redaction.redactor import Redactor, redactor_with

# The plain columns that keep an agent's words about a call, by model.
LABEL_COLUMNS = {RecallSave: ("note", "session_id"), Episode: ("session_id", "project"),
                 Fact: ("session_id", "project")}
BATCH = 2000


class BrokenChain(RuntimeError):
    pass


@dataclass
class Erased:
    """What was done in one account."""

    rows: int = 0
    events: dict[int | None, list[int]] = field(default_factory=dict)
    resealed: int = 0


@transaction.atomic
def erase_stored_secrets() -> dict[int, Erased]:
    """Every account with redaction on, in id order; what was done, by account id."""
    done = {}
    for account_id, patterns in (Account.objects.filter(redact_secrets=True).order_by("pk")
                                 .values_list("pk", "redaction_patterns")):
        redactor = redactor_with(enabled=True, patterns=patterns or [])
        done[account_id] = Erased(rows=_redact_labels(account_id, redactor))
        _erase_events(account_id, redactor, done[account_id])
    return done


def _redact_labels(account_id: int, redactor: Redactor) -> int:
    memories = list(Memory.objects.filter(account_id=account_id).values_list("pk", flat=True))
    changed = 0
    for model, columns in LABEL_COLUMNS.items():
        for column in columns:
            most = model._meta.get_field(column).max_length
            rows = model.objects.filter(memory_id__in=memories).exclude(**{column: ""})
            for value in rows.values_list(column, flat=True).distinct().iterator():
                clean, count = redactor.text(value)
                if count:
                    changed += rows.filter(**{column: value}).update(
                        **{column: clean[:most] if most else clean})
    return changed


def _holds_a_secret(redactor: Redactor, texts: list[str]) -> bool:
    return not redactor.leaves_alone(texts) and any(redactor.text(t)[1] for t in texts)


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _events(account_id: int, after_seq: int = 0) -> Iterator[AuditEvent]:
    return (AuditEvent.objects.filter(account_id=account_id, seq__gt=after_seq)
            .order_by("seq").iterator(chunk_size=BATCH))


def _erase_events(account_id: int, redactor: Redactor, done: Erased) -> None:
    if not AuditEvent.objects.filter(account_id=account_id).exists():
        return
    ok, broken = audit_verify(account_id)
    if not ok:
        raise BrokenChain(f"the audit chain of account {account_id} does not verify at seq "
                          f"{broken}; nothing was erased. Find out what changed it (`echo-memory "
                          f"audit verify --account {account_id}`) before migrating")
    doomed: list[tuple[int, int | None]] = []  # (seq, memory id) of events to erase
    reseal: set[int] = set()  # format-2 events whose session id holds a secret
    for event in _events(account_id):
        session = _holds_a_secret(redactor, [event.session_id])
        if event.salt is not None and (session or _holds_a_secret(
                redactor, [*_texts(event.before), *_texts(event.after)])):
            doomed.append((event.seq, event.memory_id))
        if session and event.format == 2:
            reseal.add(event.seq)
    if reseal:
        done.resealed = _reseal(account_id, reseal)
    by_memory: dict[int | None, list[int]] = defaultdict(list)
    if doomed:
        with erasing() as cursor:
            cursor.execute(f"{ERASE} WHERE account_id = %s AND seq = ANY(%s) "
                           "AND salt IS NOT NULL RETURNING seq, memory_id",
                           [account_id, [seq for seq, _ in doomed]])
            for seq, memory_id in sorted(cursor.fetchall()):
                by_memory[memory_id].append(seq)
    memories = Memory.objects.in_bulk([m for m in by_memory if m is not None])
    system = Principal(account_id=account_id, holder_id=None, tool="", key_id=None)
    for memory_id, seqs in by_memory.items():
        record(actor=system, memory=memories.get(memory_id),
               partition=ACCOUNT_PARTITION, session_id="", changes=[Change(
                   SECRETS_ERASED, str(memory_id or account_id), after={
                       ERASED_SEQS: seqs, "why": "their text held a secret stored "
                                                 "before redaction covered it"})])
    done.events = dict(by_memory)
    ok, broken = audit_verify(account_id)
    if not ok:
        raise BrokenChain(f"the audit chain of account {account_id} would not verify at seq "
                          f"{broken} after erasing; nothing was erased")


def _reseal(account_id: int, seqs: set[int]) -> int:
    """Events `seqs` (format 2, session id holding a secret) become format 3; every event
    from the first of them on is linked again. How many rows were rewritten."""
    first = min(seqs)
    prev = (AuditEvent.objects.filter(account_id=account_id, seq=first - 1)
            .values_list("hash", flat=True).first() or GENESIS)
    columns = ["format", "payload_digest", "prev_hash", "hash", "session_id"]
    rewritten, batch = 0, []
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_resealing', 'on', true)")
    for event in _events(account_id, after_seq=first - 1):
        if event.seq in seqs:
            event.format = 3
            if event.salt is not None:
                event.payload_digest = payload_digest_v3(event.salt, event.before, event.after,
                                                         event.session_id)
            else:  # already erased: nothing commits to its session id any more
                event.session_id = ""
        event.prev_hash = prev
        event.hash = prev = chain_digest(prev, event)
        batch.append(event)
        if len(batch) == BATCH:
            AuditEvent.objects.bulk_update(batch, columns)
            rewritten, batch = rewritten + len(batch), []
    AuditEvent.objects.bulk_update(batch, columns)
    AuditChainHead.objects.filter(account_id=account_id).update(hash=prev)
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_resealing', 'off', true)")
    return rewritten + len(batch)
