"""An entity as a person sees it: its live facts as a timeline, each edge's earlier versions,
and the entities a typed name may mean (the cause view's search-as-you-type)."""

from __future__ import annotations

import uuid
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Count, F, Q, Window
from django.db.models.functions import Coalesce, Length, RowNumber

from accounts.principal import Principal
from echomem.errors import NotFound
from memories.core.names import normalize
from memories.core.scopes import SHARED, visible_to_person
from memories.graph.browse import FactPage, browse_queryset, browse_view, keyset_page
from memories.graph.selectors import memory_for
from memories.models import Entity, Fact, Memory

# Earlier versions shown under each live edge; the rest are counted, not listed.
HISTORY_SHOWN = 5
EDGE_KEY = ("source_id", "target_id", "relation_type")


def visible_entity(principal: Principal, memory: Memory, entity_id: uuid.UUID) -> Entity:
    entity = (Entity.objects.filter(visible_to_person(principal), pk=entity_id,
                                    memory_id=memory.pk)
              .only("id", "name", "type", "partition", "episode_id", "created_at").first())
    if entity is None:
        raise NotFound(f"no entity {entity_id} in memory {memory.name!r}", field="entity",
                       fix="open the entity from the memory's facts or search")
    return entity


# When a fact happened, for a timeline: when it became true, else when it was learned.
HAPPENED_SQL = 'coalesce("memories_fact"."valid_at", "memories_fact"."created_at")'


def entity_timeline(memory: Memory, partition: str, entity_id: uuid.UUID, *,
                    cursor: str | None) -> FactPage:
    """The entity's live facts, either way, latest happened first (valid time, falling back
    to learned time), a page after `cursor`; each says which time placed it."""
    facts = (Fact.objects.filter(Q(source_id=entity_id) | Q(target_id=entity_id),
                                 memory_id=memory.pk, partition=partition,
                                 superseded_at__isnull=True)
             .annotate(happened=Coalesce("valid_at", "created_at")))
    page = keyset_page(facts, "happened", cursor, by_sql=HAPPENED_SQL, sorted_by_index=False)
    for fact in page.facts:
        fact["happened"] = fact["valid_at"] or fact["created_at"]
        fact["happened_by"] = "valid from" if fact["valid_at"] else "learned"
        fact["outgoing"] = fact["source_id"] == str(entity_id)
    return page


def entity_detail(principal: Principal, memory_name: str, entity_id: uuid.UUID, *,
                  after: str | None = None) -> dict[str, Any]:
    """The entity, a page of its timeline, and under each fact its edge's history (up to
    HISTORY_SHOWN superseded versions, newest first, with when and what replaced it)."""
    memory = memory_for(principal, memory_name)
    entity = visible_entity(principal, memory, entity_id)
    timeline = entity_timeline(memory, entity.partition, entity.pk, cursor=after)
    histories = edge_histories(memory, entity.partition, timeline.facts)
    for fact in timeline.facts:
        fact["history"] = histories.get(_key(fact), {"earlier": [], "versions": 0})
        replacement = fact["fact"]
        for version in fact["history"]["earlier"]:
            version["replaced_by_fact"] = replacement
            replacement = version["fact"]
    return {
        "entity": {"id": str(entity.pk), "name": entity.name, "type": entity.type,
                   "scope": "shared" if entity.partition == SHARED else "solo",
                   "partition": entity.partition, "episode_id": str(entity.episode_id)
                   if entity.episode_id else None, "created_at": entity.created_at},
        "memory": memory.name,
        "timeline": timeline.facts, "timeline_next": timeline.next_cursor,
    }


SUGGESTIONS = 8


def entities_named_like(principal: Principal, memory: Memory, partition: str, typed: str,
                        limit: int = SUGGESTIONS) -> list[dict[str, str]]:
    """Entities of the partition whose name contains what was typed (any case), shortest
    names first: the closest to a whole-name match lead."""
    wanted = normalize(typed)
    if not wanted:
        return []
    rows = (Entity.objects.filter(visible_to_person(principal), memory_id=memory.pk,
                                  partition=partition, normalized_name__contains=wanted)
            .order_by(Length("name"), "name").values_list("id", "name", "type")[:limit])
    return [{"id": str(pk), "name": name, "type": kind} for pk, name, kind in rows]


def _key(fact: dict[str, Any]) -> tuple[str, str, str]:
    return fact["source_id"], fact["target_id"], fact["relation_type"]


def edge_histories(memory: Memory, partition: str,
                   live: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Superseded versions of the edges of `live` facts, in one query however many edges."""
    if not live:
        return {}
    keys = reduce(or_, (Q(source_id=s, target_id=t, relation_type=r)
                        for s, t, r in {_key(f) for f in live}))
    per_edge = [F(name) for name in EDGE_KEY]
    versions = (browse_queryset(Fact.objects.filter(keys, memory_id=memory.pk,
                                                    partition=partition,
                                                    superseded_at__isnull=False))
                .annotate(nth=Window(RowNumber(), partition_by=per_edge,
                                     order_by=F("superseded_at").desc()),
                          versions=Window(Count("id"), partition_by=per_edge))
                .filter(nth__lte=HISTORY_SHOWN).order_by("-superseded_at"))
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for version in versions:
        view = browse_view(version)
        history = found.setdefault(_key(view), {"earlier": [], "versions": version.versions})
        history["earlier"].append(view)
    return found
