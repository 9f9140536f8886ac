"""Every write the engine makes. Each is one transaction and records its own audit events."""

from __future__ import annotations

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
from audit.chain import Change, append, new_events
from echomem import bulk
from echomem.errors import NotFound, ValidationFailed
from memories.core import metering
from memories.core.names import initials, normalize
from memories.core.scopes import partition_for
from memories.graph.inputs import EntityIn, FactIn
from memories.graph.resolution import Node, resolve
from memories.graph.selectors import memory_for
from memories.graph.supersession import EdgeRow, FactPlan, plan_facts
from memories.models import (
    MEMORY_NAME_RULE,
    Entity,
    Fact,
    Memory,
    memory_name_validator,
)
from memories.search import first_pass, indexing, planner_stats, storing, vector_params
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


@dataclass(frozen=True)
class EpisodeIn:
    """One episode as write_episode stores it (its entities and facts already checked)."""

    scope: str
    session_id: str
    project: str
    entities: list[EntityIn]
    facts: list[FactIn]
    entity_resolutions: dict[str, str]
    assume_new: bool


def write_episode(principal: Principal, *, scope: str, entities: list[EntityIn],
                  facts: list[FactIn], entity_resolutions: dict[str, str] | None = None,
                  assume_new: bool = False, memory: str | None = None, session_id: str = "",
                  project: str = "") -> dict[str, Any]:
    """Store an episode whole, or defer it whole if any name is ambiguous. Its text comes
    redacted (tools.calling.call_tool redacts every call's free text)."""
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    episode = EpisodeIn(scope=scope, session_id=session_id, project=project,
                        entities=entities, facts=facts,
                        entity_resolutions=entity_resolutions or {}, assume_new=assume_new)
    planner_stats.analyze_unanalyzed_tables()
    for attempt in range(MAX_ATTEMPTS):
        try:
            with transaction.atomic():
                return _write_episode(principal, graph, partition, episode)
        except IntegrityError as exc:
            constraint = getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None)
            if constraint not in RETRIED_CONSTRAINTS or attempt == MAX_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def hold_memory(memory: Memory) -> None:
    """Keep the memory from being deleted until this transaction ends; one deleted since it
    was looked up is NotFound (deletion holds its row lock while it erases, so a write
    that reaches this waits, then finds it gone, instead of failing on a foreign key)."""
    if not bulk.execute("SELECT 1 FROM memories_memory WHERE id = %s FOR KEY SHARE",
                        [memory.pk]):
        raise NotFound(f"memory {memory.name!r} was deleted; nothing was stored",
                       field="memory", fix="write to another memory of this account")


@dataclass(frozen=True)
class _Write:
    """Where and when one episode is being stored, as each step below needs it."""

    principal: Principal
    memory: Memory
    partition: str
    episode: EpisodeIn
    episode_id: uuid.UUID
    now: datetime


def _write_episode(
    principal: Principal, memory: Memory, partition: str, episode: EpisodeIn
) -> dict[str, Any]:
    searched = [search_text_for(f.fact, f.source, f.target) for f in episode.facts]
    alone = first_pass.soon(searched)
    hold_memory(memory)
    resolution = resolve(memory=memory, partition=partition, entities=episode.entities,
                         resolutions=episode.entity_resolutions, assume_new=episode.assume_new)
    reply: dict[str, Any] = {"memory": memory.name, "scope": episode.scope}
    if resolution.ambiguous:
        return reply | _deferred(resolution.ambiguous)

    nodes = dict(resolution.existing)
    plan = plan_facts(memory, partition, episode.facts, nodes)
    if not resolution.new and not plan.new and not plan.superseding:
        return reply | _reply_body(nodes, plan, {}, new_entities=[]) | {
            "stored": True, "episode_id": None,
            "message": "Already stored: every fact is identical to its live edge.",
        }

    write = _Write(principal, memory, partition, episode, uuid.uuid4(), timezone.now())
    created_nodes = [Node(uuid.uuid4(), e.name, e.type, normalize(e.name)) for e in resolution.new]
    nodes.update({node.name: node for node in created_nodes})
    new_rows = _new_rows(plan, nodes, searched)
    _free_superseded_keys(plan, new_rows, write.now)
    statements = [_episode_statement(write),
                  *_entity_statements(write, created_nodes, resolution.name_embeddings),
                  *_fact_statements(write, new_rows, alone)]
    with bulk.meanwhile(*bulk.combine(statements)):
        # The audit events are prepared while the server stores the rows.
        events = _audit_events(write, created_nodes, plan, new_rows, nodes)

    # Paid after the rows are in and before the audit chain's head is locked (always in
    # that order, so writers cannot deadlock): a refusal rolls the whole episode back.
    metering.charge(principal, memory, "write_episode", [1] * len(new_rows), whole=True)
    append(events)
    transaction.on_commit(partial(indexing.schedule, [row.pk for row in new_rows.values()]))

    body = _reply_body(nodes, plan, new_rows, new_entities=created_nodes)
    return reply | body | {
        "stored": True, "episode_id": str(write.episode_id),
        "message": f"Stored {len(new_rows)} fact(s) and {len(created_nodes)} new entit"
                   f"{'y' if len(created_nodes) == 1 else 'ies'}.",
    }


def _deferred(ambiguous: list) -> dict[str, Any]:
    """The reply when a name may mean an existing entity: nothing stored, candidates named."""
    names = ", ".join(repr(a.name) for a in ambiguous)
    return {
        "stored": False, "edges_created": [], "superseded": [], "unchanged": [],
        "ambiguous_entities": [a.as_dict() for a in ambiguous], "units": 0,
        "message": (
            f"Nothing was stored: {names} may be an existing entity. Call write_episode "
            "again with entity_resolutions mapping each of these names to one candidate "
            "id, or to \"new\" if it is a different thing."
        ),
    }


def _new_rows(plan: FactPlan, nodes: dict[str, Node], searched: list[str]) -> dict[int, EdgeRow]:
    """The facts to insert (new keys and new versions of live edges), by position."""
    new_rows: dict[int, EdgeRow] = {}
    for position, fact_in in [*plan.new, *((i, f) for i, f, _ in plan.superseding)]:
        new_rows[position] = EdgeRow(
            pk=uuid.uuid4(), source_id=nodes[fact_in.source].pk,
            target_id=nodes[fact_in.target].pk, relation_type=fact_in.relation_type,
            fact=fact_in.fact, confidence=fact_in.confidence, causal_hint=fact_in.causal_hint,
            valid_at=fact_in.valid_at, invalid_at=fact_in.invalid_at, position=position,
            search_text=searched[position],
        )
    return new_rows


def _free_superseded_keys(plan: FactPlan, new_rows: dict[int, EdgeRow], now: datetime) -> None:
    """Free each key's unique slot before the new edge takes it (a statement of its own:
    the unique index is checked row by row); the foreign key to the new row is checked
    at commit (Django creates it DEFERRABLE INITIALLY DEFERRED)."""
    if plan.superseding:
        bulk.execute(
            "UPDATE memories_fact f SET superseded_at = %s, superseded_by_id = v.new "
            "FROM unnest(%s::uuid[], %s::uuid[]) AS v(old, new) WHERE f.id = v.old",
            [now, [old.pk for _, _, old in plan.superseding],
             [new_rows[i].pk for i, _, _ in plan.superseding]],
        )


def _episode_statement(write: _Write) -> bulk.Statement:
    principal, episode = write.principal, write.episode
    return bulk.Statement(
        "INSERT INTO memories_episode (id, memory_id, partition, session_id, project, "
        "holder_id, tool, key_id, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        [write.episode_id, write.memory.pk, write.partition, episode.session_id,
         episode.project, principal.holder_id, principal.tool, principal.key_id, write.now])


def _entity_statements(write: _Write, created_nodes: list[Node],
                       name_embeddings: dict[str, Any]) -> list[bulk.Statement]:
    if not created_nodes:
        return []
    return [bulk.insert_statement(Entity, [{
        "id": node.pk, "memory_id": write.memory.pk, "partition": write.partition,
        "name": node.name, "normalized_name": node.normalized_name,
        "initials": initials(node.name), "type": node.type,
        "name_embedding": vector_params.vector(name_embeddings[node.name]),
        "episode_id": write.episode_id, "created_at": write.now,
    } for node in created_nodes])]


def _fact_statements(write: _Write, new_rows: dict[int, EdgeRow],
                     alone: Any) -> list[bulk.Statement]:
    if not new_rows:
        return []
    principal, episode = write.principal, write.episode
    rows = sorted(new_rows.values(), key=lambda f: f.position)
    first_pass_vectors = first_pass.halfvecs(
        [f.search_text for f in rows], [f.position for f in rows],
        alone=alone.result()[[f.position for f in rows]] if alone else None)
    contexts = storing.contexts([f.search_text for f in rows], [f.position for f in rows])
    return [bulk.insert_statement(Fact, [{
        "id": f.pk, "memory_id": write.memory.pk, "partition": write.partition,
        "source_id": f.source_id, "target_id": f.target_id,
        "relation_type": f.relation_type, "fact": f.fact, "confidence": f.confidence,
        "causal_hint": f.causal_hint, "session_id": episode.session_id,
        "project": episode.project, "episode_id": write.episode_id, "position": f.position,
        "written_by_holder_id": principal.holder_id,
        "written_by_tool": principal.tool, "written_by_key_id": principal.key_id,
        "created_at": write.now, "valid_at": f.valid_at, "invalid_at": f.invalid_at,
        "search_text": f.search_text, "first_pass_embedding": first_pass_vector,
        "context_vector": context,
    } for f, first_pass_vector, context in zip(rows, first_pass_vectors, contexts, strict=True)],
        casts={"context_vector": "text"}, through={"context_vector": storing.CONTEXT_VECTOR})]


def _audit_events(write: _Write, created_nodes: list[Node], plan: FactPlan,
                  new_rows: dict[int, EdgeRow], nodes: dict[str, Node]) -> list:
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
                                         "superseded_at": write.now}))
        changes.append(Change("fact.created", str(row.pk),
                              after=_snapshot(row, names)
                              | {"episode_id": str(write.episode_id)}))
    return new_events(actor=write.principal, memory=write.memory,
                      partition=write.partition, session_id=write.episode.session_id,
                      changes=changes)


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
    nodes: dict[str, Node], plan: FactPlan, new_rows: dict[int, EdgeRow], new_entities: list[Node]
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
