"""Every write the engine makes. Each is one transaction and records its own audit events."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.account_events import account_event
from accounts.principal import Principal
from audit.chain import RECALL_SAVED, Change, append, new_events, record
from echomem import bulk
from echomem.errors import NotFound, ValidationFailed
from memories.core import metering
from memories.core.scopes import partition_for
from memories.graph.names import initials, normalize
from memories.graph.resolution import Node, resolve
from memories.graph.selectors import memory_for
from memories.models import (
    MEMORY_NAME_RULE,
    Entity,
    Fact,
    Memory,
    RecallSave,
    memory_name_validator,
)
from memories.schemas import FactIn, RecordRecallSaveArgs, WriteEpisodeArgs
from memories.search import first_pass, indexing, planner_stats, vector_params
from memories.search.fact_text import search_text_for

# Races on a unique constraint (two writers creating one key or one entity) are
# resolved by running the losing transaction again: it then sees the winner's row.
RETRIED_CONSTRAINTS = {"one_live_edge_per_key", "entity_name_per_partition"}
MAX_ATTEMPTS = 8


def memory_create(*, account_id: int, name: str, description: str = "",
                  actor_id: int | None = None) -> Memory:
    """A new memory, recorded as `memory.created` by `actor_id` (None: the server itself)."""
    try:
        memory_name_validator(name)
    except ValidationError:
        raise ValidationFailed(
            f"memory name {name!r} is not allowed", field="name",
            fix=f"use {MEMORY_NAME_RULE}, for example 'support-bot'",
        ) from None
    try:
        with transaction.atomic():
            memory = Memory.objects.create(account_id=account_id, name=name,
                                           description=description)
            account_event(account_id=account_id, actor_id=actor_id, action="memory.created",
                          object_id=memory.pk, memory=memory, after={"name": name})
            return memory
    except IntegrityError:
        raise ValidationFailed(
            f"a memory named {name!r} already exists in this account", field="name",
            fix="choose another name, or use the existing memory",
        ) from None


def write_episode(principal: Principal, args: WriteEpisodeArgs) -> dict[str, Any]:
    """Store an episode whole, or defer it whole if any name is ambiguous. Its text comes
    redacted (mcp_gateway.tools.call_tool redacts every call's free text)."""
    memory = memory_for(principal, args.memory)
    partition = partition_for(principal, args.scope)
    planner_stats.analyze_unanalyzed_tables()
    for attempt in range(MAX_ATTEMPTS):
        try:
            with transaction.atomic():
                return _write_episode(principal, memory, partition, args)
        except IntegrityError as exc:
            constraint = getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None)
            if constraint not in RETRIED_CONSTRAINTS or attempt == MAX_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


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
class _Plan:
    new: list[tuple[int, FactIn]]
    superseding: list[tuple[int, FactIn, EdgeRow]]
    unchanged: list[tuple[int, FactIn, EdgeRow]]


def hold_memory(memory: Memory) -> None:
    """Keep the memory from being deleted until this transaction ends; one deleted since it
    was looked up is NotFound (deletion holds its row lock while it erases, so a write
    that reaches this waits, then finds it gone, instead of failing on a foreign key)."""
    if not bulk.execute("SELECT 1 FROM memories_memory WHERE id = %s FOR KEY SHARE",
                        [memory.pk]):
        raise NotFound(f"memory {memory.name!r} was deleted; nothing was stored",
                       field="memory", fix="write to another memory of this account")


def _write_episode(
    principal: Principal, memory: Memory, partition: str, args: WriteEpisodeArgs
) -> dict[str, Any]:
    searched = [search_text_for(f.fact, f.source, f.target) for f in args.facts]
    alone = first_pass.soon(searched)
    hold_memory(memory)
    resolution = resolve(memory=memory, partition=partition, entities=args.entities,
                         resolutions=args.entity_resolutions, assume_new=args.assume_new)
    reply: dict[str, Any] = {"memory": memory.name, "scope": args.scope}
    if resolution.ambiguous:
        names = ", ".join(repr(a.name) for a in resolution.ambiguous)
        return reply | {
            "stored": False, "edges_created": [], "superseded": [], "unchanged": [],
            "ambiguous_entities": [a.as_dict() for a in resolution.ambiguous], "units": 0,
            "message": (
                f"Nothing was stored: {names} may be an existing entity. Call write_episode "
                "again with entity_resolutions mapping each of these names to one candidate "
                "id, or to \"new\" if it is a different thing."
            ),
        }

    nodes = dict(resolution.existing)
    plan = _plan_facts(memory, partition, args.facts, nodes)
    if not resolution.new and not plan.new and not plan.superseding:
        return reply | _reply_body(nodes, plan, {}, new_entities=[]) | {
            "stored": True, "episode_id": None,
            "message": "Already stored: every fact is identical to its live edge.",
        }

    now = timezone.now()
    episode_id = uuid.uuid4()
    created_nodes = [Node(uuid.uuid4(), e.name, e.type, normalize(e.name)) for e in resolution.new]
    nodes.update({node.name: node for node in created_nodes})
    new_rows: dict[int, EdgeRow] = {}
    for position, fact_in in [*plan.new, *((i, f) for i, f, _ in plan.superseding)]:
        new_rows[position] = EdgeRow(
            pk=uuid.uuid4(), source_id=nodes[fact_in.source].pk,
            target_id=nodes[fact_in.target].pk, relation_type=fact_in.relation_type,
            fact=fact_in.fact, confidence=fact_in.confidence, causal_hint=fact_in.causal_hint,
            valid_at=fact_in.valid_at, invalid_at=fact_in.invalid_at, position=position,
            search_text=searched[position],
        )
    # Free each key's unique slot before the new edge takes it (a statement of its own:
    # the unique index is checked row by row); the foreign key to the new row is checked
    # at commit (Django creates it DEFERRABLE INITIALLY DEFERRED).
    if plan.superseding:
        bulk.execute(
            "UPDATE memories_fact f SET superseded_at = %s, superseded_by_id = v.new "
            "FROM unnest(%s::uuid[], %s::uuid[]) AS v(old, new) WHERE f.id = v.old",
            [now, [old.pk for _, _, old in plan.superseding],
             [new_rows[i].pk for i, _, _ in plan.superseding]],
        )
    # Episode, entities and facts in one round trip.
    statements = [bulk.Statement(
        "INSERT INTO memories_episode (id, memory_id, partition, session_id, project, "
        "holder_id, tool, key_id, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        [episode_id, memory.pk, partition, args.session_id, args.project,
         principal.holder_id, principal.tool, principal.key_id, now])]
    if created_nodes:
        statements.append(bulk.insert_statement(Entity, [{
            "id": node.pk, "memory_id": memory.pk, "partition": partition, "name": node.name,
            "normalized_name": node.normalized_name, "initials": initials(node.name),
            "type": node.type,
            "name_embedding": vector_params.vector(resolution.name_embeddings[node.name]),
            "episode_id": episode_id, "created_at": now,
        } for node in created_nodes]))
    if new_rows:
        rows = sorted(new_rows.values(), key=lambda f: f.position)
        first_pass_vectors = first_pass.halfvecs(
            [f.search_text for f in rows], [f.position for f in rows],
            alone=alone.result()[[f.position for f in rows]] if alone else None)
        statements.append(bulk.insert_statement(Fact, [{
            "id": f.pk, "memory_id": memory.pk, "partition": partition,
            "source_id": f.source_id, "target_id": f.target_id,
            "relation_type": f.relation_type, "fact": f.fact, "confidence": f.confidence,
            "causal_hint": f.causal_hint, "session_id": args.session_id,
            "project": args.project, "episode_id": episode_id, "position": f.position,
            "written_by_holder_id": principal.holder_id,
            "written_by_tool": principal.tool, "written_by_key_id": principal.key_id,
            "created_at": now, "valid_at": f.valid_at, "invalid_at": f.invalid_at,
            "search_text": f.search_text, "first_pass_embedding": first_pass_vector,
        } for f, first_pass_vector in zip(rows, first_pass_vectors, strict=True)]))
    with bulk.meanwhile(*bulk.combine(statements)):
        # The audit events are prepared while the server stores the rows.
        changes = [Change("entity.created", str(n.pk), after={"name": n.name, "type": n.type})
                   for n in created_nodes]
        superseded_by_position = {i: old for i, _, old in plan.superseding}
        names = {node.pk: node.name for node in nodes.values()}
        for position, row in sorted(new_rows.items()):
            old = superseded_by_position.get(position)
            if old is not None:
                changes.append(Change("fact.superseded", str(old.pk),
                                      before=_snapshot(old, names),
                                      after={"superseded_by": str(row.pk),
                                             "superseded_at": now}))
            changes.append(Change("fact.created", str(row.pk),
                                  after=_snapshot(row, names) | {"episode_id": str(episode_id)}))
        events = new_events(actor=principal, memory=memory, partition=partition,
                            session_id=args.session_id, changes=changes)

    # Paid after the rows are in and before the audit chain's head is locked (always in
    # that order, so writers cannot deadlock): a refusal rolls the whole episode back.
    metering.charge(principal, memory, "write_episode", [1] * len(new_rows), whole=True)
    append(events)
    transaction.on_commit(partial(indexing.schedule, [row.pk for row in new_rows.values()]))

    body = _reply_body(nodes, plan, new_rows, new_entities=created_nodes)
    return reply | body | {
        "stored": True, "episode_id": str(episode_id),
        "message": f"Stored {len(new_rows)} fact(s) and {len(created_nodes)} new entit"
                   f"{'y' if len(created_nodes) == 1 else 'ies'}.",
    }


def _plan_facts(
    memory: Memory, partition: str, facts: list[FactIn], nodes: dict[str, Node]
) -> _Plan:
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
    plan = _Plan(new=[], superseding=[], unchanged=[])
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


def _snapshot(fact: EdgeRow, names: dict[uuid.UUID, str]) -> dict[str, Any]:
    """What the audit keeps of a fact; node names come from the episode, not a query."""
    return {
        "source": names[fact.source_id], "target": names[fact.target_id],
        "relation_type": fact.relation_type, "fact": fact.fact,
        "confidence": fact.confidence, "causal_hint": fact.causal_hint,
        "valid_at": fact.valid_at, "invalid_at": fact.invalid_at,
    }


def _edge(fact_id: uuid.UUID, fact_in: FactIn) -> dict[str, Any]:
    return {"fact_id": str(fact_id), "source": fact_in.source, "target": fact_in.target,
            "relation_type": fact_in.relation_type}


def _reply_body(
    nodes: dict[str, Node], plan: _Plan, new_rows: dict[int, EdgeRow], new_entities: list[Node]
) -> dict[str, Any]:
    created_ids = {node.pk for node in new_entities}
    by_position = [*plan.new, *((i, f) for i, f, _ in plan.superseding)]
    return {
        "edges_created": [_edge(new_rows[i].pk, f) for i, f in sorted(by_position,
                                                                      key=lambda p: p[0])
                          if i in new_rows],
        "superseded": [
            _edge(old.pk, f) | {"superseded_by": str(new_rows[i].pk)}
            for i, f, old in plan.superseding if i in new_rows
        ],
        "unchanged": [_edge(old.pk, f) for _, f, old in plan.unchanged],
        "ambiguous_entities": [],
        "entities": [
            {"name": name, "id": str(node.pk), "type": node.type,
             "created": node.pk in created_ids}
            for name, node in nodes.items()
        ],
        "units": len(new_rows),
    }


@transaction.atomic
def record_recall_save(principal: Principal, args: RecordRecallSaveArgs) -> dict[str, Any]:
    """The writer comes from the fact's own edge and the reader from the key, never the caller."""
    memory = memory_for(principal, args.memory)
    hold_memory(memory)
    partition = partition_for(principal, args.scope)
    fact = (Fact.objects.select_related("source", "target")
            .filter(pk=args.fact_id, memory=memory, partition=partition).first())
    if fact is None:
        raise NotFound(
            f"fact {args.fact_id} not found in scope {args.scope!r} of memory {memory.name!r}",
            field="fact_id", fix="pass a fact_id returned by query_memory with the same scope "
                                 "and memory",
        )
    save = RecallSave.objects.create(
        fact=fact, memory=memory, partition=partition,
        writer_holder_id=fact.written_by_holder_id, writer_tool=fact.written_by_tool,
        reader_holder_id=principal.holder_id, reader_tool=principal.tool,
        reader_key_id=principal.key_id, note=args.note, session_id=args.session_id,
    )
    writer = {"holder_id": fact.written_by_holder_id, "tool": fact.written_by_tool}
    reader = {"holder_id": principal.holder_id, "tool": principal.tool}
    record(actor=principal, memory=memory, partition=partition,
           session_id=args.session_id, changes=[Change(
               RECALL_SAVED, str(save.pk),
               after={"fact_id": str(fact.pk), "note": args.note,
                      "writer": writer, "reader": reader})])
    return {"recorded": True, "recall_save_id": str(save.pk), "fact_id": str(fact.pk),
            "writer": writer, "reader": reader, "memory": memory.name, "units": 0}



