"""trace_cause: walk the causal links agents recorded, never infer one.

Every hint is normalized to one direction, cause -> effect:
  A led_to B      : A -> B
  A caused_by B   : B -> A
  A enabled_by B  : B -> A   (the enabler points at the thing)
  A blocked_by B  : B -> A   (the blocker points at the thing)
  A contradicts B : reported, never walked
so "A led_to B" and "B caused_by A" are the same claim and give one chain.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Q

from accounts.principal import Principal
from memories.core import metering
from memories.core.names import normalize
from memories.core.scopes import partition_for
from memories.graph.selectors import _query_vector, fact_view, facts_for_view, memory_for
from memories.models import Entity, Fact
from memories.search import vector_params
from memories.search.window import Window

FORWARD = "led_to"                                  # source is the cause
BACKWARD = ("caused_by", "enabled_by", "blocked_by")  # target is the cause
MAX_BRANCHES_PER_NODE = 20
MAX_CHAINS = 50
ANCHOR_TRIGRAM = 0.35
ANCHOR_EMBEDDING = 0.6
MAX_SIMILAR_ANCHORS = 3
# Which lists each direction fills, and how a message names what none was recorded of.
SIDES = {"upstream": ("causes",), "downstream": ("effects",), "both": ("causes", "effects")}
_WHAT = {"upstream": "a cause", "downstream": "an effect", "both": "a cause or an effect"}


@dataclass(frozen=True)
class Link:
    fact: Fact
    cause: uuid.UUID
    effect: uuid.UUID


def trace_cause(principal: Principal, *, scope: str, subject: str,
                direction: str = "both", max_hops: int = 3, as_of: datetime | None = None,
                valid_as_of: datetime | None = None,
                memory: str | None = None) -> dict[str, Any]:
    graph = memory_for(principal, memory)
    partition = partition_for(principal, scope)
    in_scope = Entity.objects.filter(memory=graph, partition=partition)
    anchors = _anchors(in_scope, graph.pk, partition, subject)
    reply: dict[str, Any] = {
        "subject": subject, "memory": graph.name, "scope": scope,
        "anchors": [{"id": str(e.pk), "name": e.name, "type": e.type, "matched": how}
                    for e, how in anchors],
        "causes": [], "effects": [], "contradictions": [], "truncated": False,
        "empty_reason": None, "empty_sides": list(SIDES[direction]), "units": 0,
        "cut_by_allowance": False,
    }
    if not anchors:
        return reply | {
            "empty_reason": "no_anchor",
            "message": f"No entity in this scope is named like {subject!r}, so there is "
                       "nothing to trace from. query_memory finds facts by words and meaning.",
        }
    window = Window(as_of=as_of, valid_as_of=valid_as_of)
    walk = _Walk(graph.pk, partition, max_hops, window)
    starts = [entity.pk for entity, _ in anchors]
    if direction in ("upstream", "both"):
        reply["causes"] = walk.chains(starts, upstream=True)
    if direction in ("downstream", "both"):
        reply["effects"] = walk.chains(starts, upstream=False)
    touched = set(starts) | walk.seen_nodes
    contradictions = list(
        facts_for_view(Fact.objects.filter(
            window.q(), Q(source_id__in=touched) | Q(target_id__in=touched),
            memory_id=graph.pk, partition=partition, causal_hint="contradicts",
        )).order_by("created_at")[:MAX_CHAINS]
    )
    reply["contradictions"] = [fact_view(f) for f in contradictions]
    reply["truncated"] = walk.truncated
    # Judged on what was found, before the allowance cuts anything: a side the allowance
    # dropped is not one nobody recorded.
    reply["empty_sides"] = [side for side in SIDES[direction] if not reply[side]]
    returned = _pay(principal, graph, reply)
    reply["units"] = len(returned)
    name = anchors[0][0].name
    if not returned:
        reply["empty_reason"] = "no_causal_links"
        reply["message"] = (
            f"Nobody recorded {_WHAT[direction]} for {name!r} (facts with a "
            "causal_hint). That is not evidence that none exists; nothing here is inferred.")
    elif reply["empty_sides"]:
        reply["message"] = " ".join(filter(None, [reply.get("message"),
                                                  _one_side_empty(reply, name)]))
    return reply


def _one_side_empty(reply: dict[str, Any], name: str) -> str:
    """What a reply with something in it says about the side it has nothing on."""
    found = [f"{len(reply[side])} {side[:-1]} chain(s)" for side in ("causes", "effects")
             if reply[side]]
    if reply["contradictions"]:
        found.append(f"{len(reply['contradictions'])} contradiction(s)")
    missing = " and no ".join("cause" if side == "causes" else "effect"
                              for side in reply["empty_sides"])
    return (f"Found {' and '.join(found)} but no {missing}: nobody recorded one for "
            f"{name!r} (a fact with a causal_hint). That is not evidence that none exists.")


def _pay(principal: Principal, memory, reply: dict[str, Any]) -> set[str]:
    """Charge one unit per distinct fact returned, keeping the chains (causes, then effects,
    then contradictions) the allowance covers; the ids of the facts kept."""
    items = ([("causes", chain) for chain in reply["causes"]]
             + [("effects", chain) for chain in reply["effects"]]
             + [("contradictions", [fact]) for fact in reply["contradictions"]])
    seen: set[str] = set()
    costs = []
    for _, facts in items:
        new = {f["fact_id"] for f in facts} - seen
        costs.append(len(new))
        seen |= new
    with transaction.atomic():
        paid = metering.charge(principal, memory, "trace_cause", costs)
    if paid < len(items):
        for name in ("causes", "effects", "contradictions"):
            reply[name] = []
        for name, facts in items[:paid]:
            reply[name].extend(facts if name == "contradictions" else [facts])
        reply["cut_by_allowance"] = True
        reply["message"] = metering.cut_short(
            paid, len(items), what="chains and contradictions",
            rule="one unit per distinct fact returned")
    return {f["fact_id"] for _, facts in items[:paid] for f in facts}


def _anchors(scope, memory_id: int, partition: str, subject: str) -> list[tuple[Entity, str]]:
    scope = scope.defer("name_embedding")
    exact = list(scope.filter(name=subject))
    if exact:
        return [(e, "exact") for e in exact]
    normalized = list(scope.filter(normalized_name=normalize(subject)))
    if normalized:
        return [(e, "normalized") for e in normalized]
    similar: dict[uuid.UUID, float] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, similarity(normalized_name, %s) FROM memories_entity "
            "WHERE memory_id = %s AND partition = %s AND normalized_name %% %s "
            "ORDER BY 2 DESC LIMIT %s",
            [normalize(subject), memory_id, partition, normalize(subject), MAX_SIMILAR_ANCHORS],
        )
        for entity_id, score in cursor.fetchall():
            if score >= ANCHOR_TRIGRAM:
                similar[entity_id] = max(similar.get(entity_id, 0.0), score)
        vector = vector_params.vector(_query_vector(subject))
        cursor.execute(
            "SELECT id, 1 - (name_embedding <=> %s::vector) FROM memories_entity "
            "WHERE memory_id = %s AND partition = %s AND name_embedding IS NOT NULL "
            "ORDER BY name_embedding <=> %s::vector LIMIT %s",
            [vector, memory_id, partition, vector, MAX_SIMILAR_ANCHORS],
        )
        for entity_id, score in cursor.fetchall():
            if score >= ANCHOR_EMBEDDING:
                similar[entity_id] = max(similar.get(entity_id, 0.0), score)
    best = sorted(similar.items(), key=lambda item: -item[1])[:MAX_SIMILAR_ANCHORS]
    nodes = scope.in_bulk([entity_id for entity_id, _ in best])
    return [(nodes[entity_id], "similar") for entity_id, _ in best if entity_id in nodes]


class _Walk:
    """Simple paths from the anchors, one query per hop, with bounded fan-out."""

    def __init__(self, memory_id: int, partition: str, max_hops: int, window: Window):
        self.memory_id = memory_id
        self.partition = partition
        self.max_hops = max_hops
        self.window = window
        self.truncated = False
        self.seen_nodes: set[uuid.UUID] = set()

    def _links(self, nodes: set[uuid.UUID], upstream: bool) -> dict[uuid.UUID, list[Link]]:
        """Causal links that end (upstream) or start (downstream) at each of `nodes`."""
        versions = facts_for_view(Fact.objects.filter(
            self.window.q(), memory_id=self.memory_id, partition=self.partition))
        if upstream:  # links whose effect is in `nodes`
            match = Q(causal_hint=FORWARD, target_id__in=nodes) | Q(
                causal_hint__in=BACKWARD, source_id__in=nodes)
        else:         # links whose cause is in `nodes`
            match = Q(causal_hint=FORWARD, source_id__in=nodes) | Q(
                causal_hint__in=BACKWARD, target_id__in=nodes)
        by_node: dict[uuid.UUID, list[Link]] = {}
        for fact in versions.filter(match).order_by("-created_at"):
            if fact.causal_hint == FORWARD:
                link = Link(fact, cause=fact.source_id, effect=fact.target_id)
            else:
                link = Link(fact, cause=fact.target_id, effect=fact.source_id)
            here = link.effect if upstream else link.cause
            by_node.setdefault(here, []).append(link)
        return by_node

    def chains(self, starts: list[uuid.UUID], upstream: bool) -> list[list[dict[str, Any]]]:
        # A path is (links so far, nodes on it); the start node is on every path.
        frontier: list[tuple[list[Link], set[uuid.UUID], uuid.UUID]] = [
            ([], {start}, start) for start in starts]
        finished: list[list[Link]] = []
        for _ in range(self.max_hops):
            if not frontier:
                break
            links = self._links({end for _, _, end in frontier}, upstream)
            extended = []
            for path, on_path, end in frontier:
                options = [link for link in links.get(end, [])
                           if (link.cause if upstream else link.effect) not in on_path]
                if len(options) > MAX_BRANCHES_PER_NODE:
                    options, self.truncated = options[:MAX_BRANCHES_PER_NODE], True
                if not options and path:
                    finished.append(path)
                for link in options:
                    nxt = link.cause if upstream else link.effect
                    extended.append(([*path, link], on_path | {nxt}, nxt))
            if len(extended) + len(finished) > MAX_CHAINS:
                self.truncated = True
                extended = extended[:max(0, MAX_CHAINS - len(finished))]
            frontier = extended
        finished.extend(path for path, _, _ in frontier if path)
        for path in finished:
            for link in path:
                self.seen_nodes.update((link.cause, link.effect))
        return [[_chain_item(link) for link in path] for path in finished[:MAX_CHAINS]]


def _chain_item(link: Link) -> dict[str, Any]:
    fact = link.fact
    cause, effect = (fact.source, fact.target) if link.cause == fact.source_id else (
        fact.target, fact.source)
    return fact_view(fact) | {"cause": cause.name, "effect": effect.name}
