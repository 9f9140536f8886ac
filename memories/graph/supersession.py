"""How the facts of an episode meet the live edges of their keys: each is new, a new
version of a live edge (superseding it), or identical to it (unchanged).

(source, target, relation_type) is a fact's key; one key holds one live fact. Writers of
one key are serialized by a lock on the key itself, taken in one global order.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime

from echomem import bulk
from echomem.errors import ValidationFailed
from memories.graph.inputs import FactIn
from memories.graph.resolution import Node
from memories.models import Memory


@dataclass
class EdgeRow:
    """A fact as the write path handles it: read back for comparison, or about to be stored."""

    pk: uuid.UUID
    source_id: uuid.UUID
    target_id: uuid.UUID
    relation_type: str
    fact: str
    confidence: str
    causal_hint: str | None
    valid_at: datetime | None
    invalid_at: datetime | None
    position: int = 0
    search_text: str = ""


@dataclass
class FactPlan:
    new: list[tuple[int, FactIn]]
    superseding: list[tuple[int, FactIn, EdgeRow]]
    unchanged: list[tuple[int, FactIn, EdgeRow]]



def plan_facts(
    memory: Memory, partition: str, facts: list[FactIn], nodes: dict[str, Node]
) -> FactPlan:
    """Sort facts into new, superseding and unchanged, locking the live edges they touch."""
    keyed = [(i, f) for i, f in enumerate(facts) if f.source in nodes and f.target in nodes]
    _refuse_shared_keys(keyed, nodes)
    live: dict[tuple[uuid.UUID, uuid.UUID, str], EdgeRow] = {}
    if keyed:
        sources = [nodes[f.source].pk for _, f in keyed]
        targets = [nodes[f.target].pk for _, f in keyed]
        relations = [f.relation_type for _, f in keyed]
        # The keys' locks, then (a statement of its own, so its snapshot is taken once they
        # are held) one unique-index probe per key: the LATERAL ... LIMIT 1 shape keeps that
        # plan even when the table's statistics are stale (a fresh box filling up fast).
        _, found = bulk.execute_all([
            _lock_keys(memory, partition, zip(sources, targets, relations, strict=True)),
            bulk.Statement(
                "SELECT f.* FROM unnest(%s::uuid[], %s::uuid[], %s::text[]) AS k(s, t, r) "
                "CROSS JOIN LATERAL (SELECT id, source_id, target_id, relation_type, fact, "
                "confidence, causal_hint, valid_at, invalid_at FROM memories_fact "
                "WHERE memory_id = %s AND partition = %s AND source_id = k.s "
                "AND target_id = k.t AND relation_type = k.r AND superseded_at IS NULL "
                "LIMIT 1) f",
                [sources, targets, relations, memory.pk, partition]),
        ])
        rows = [EdgeRow(*row) for row in found]
        live = {(row.source_id, row.target_id, row.relation_type): row for row in rows}
    plan = FactPlan(new=[], superseding=[], unchanged=[])
    for index, fact_in in enumerate(facts):
        key = (nodes[fact_in.source].pk, nodes[fact_in.target].pk, fact_in.relation_type) \
            if fact_in.source in nodes and fact_in.target in nodes else None
        old = live.get(key) if key else None
        if old is None:
            plan.new.append((index, fact_in))
        elif _identical(old, fact_in):
            plan.unchanged.append((index, fact_in, old))
        else:
            plan.superseding.append((index, fact_in, old))
    return plan


def _refuse_shared_keys(keyed: list[tuple[int, FactIn]], nodes: dict[str, Node]) -> None:
    """Two names resolved to one node can give two facts one edge key; refuse, naming both.

    The arguments already refuse two facts with one key as written; this catches keys
    that meet only once names are resolved (an `entity_resolutions` id, a spelling that
    normalizes to an existing node).
    """
    seen: dict[tuple[uuid.UUID, uuid.UUID, str], int] = {}
    for index, fact in keyed:
        key = (nodes[fact.source].pk, nodes[fact.target].pk, fact.relation_type)
        if key in seen:
            other = seen[key]
            raise ValidationFailed(
                f"facts[{other}] and facts[{index}] are one edge once names are resolved: "
                f"their sources and targets are the same entities and both are "
                f"{fact.relation_type!r}", field=f"facts[{index}]",
                fix="merge the two facts into one, or give one a distinguishing relation_type",
            )
        seen[key] = index


def _lock_keys(memory: Memory, partition: str, keys) -> bulk.Statement:
    """The statement that serializes writers of the same edge keys until commit, in one
    global order.

    A row lock on the live edge is not enough: a waiter would wake to find the row
    superseded, see no live edge and collide with the winner's new one. A lock on
    the key itself makes the waiter read the winner's edge instead.
    """
    ids = sorted({
        int.from_bytes(hashlib.blake2b(
            f"{memory.pk}\x1f{partition}\x1f{s}\x1f{t}\x1f{r}".encode(), digest_size=8,
        ).digest(), "big", signed=True)
        for s, t, r in keys
    })
    return bulk.Statement(
        "SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k ORDER BY k", [ids])


def _identical(old: EdgeRow, new: FactIn) -> bool:
    return (old.fact, old.confidence, old.causal_hint, old.valid_at, old.invalid_at) == (
        new.fact, new.confidence, new.causal_hint, new.valid_at, new.invalid_at)
