"""Provenance: one episode, who wrote it from where, and every fact and entity it wrote.

Plain dicts in the tools' shapes (fact_view): the explorer's episode page shows
`episode_detail` as it is, and the agents' `get_episode` tool returns it with its
partition's scope rules and one unit per fact.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.db.models import Q

from accounts.principal import Principal
from echomem.errors import NotFound
from memories.core import metering
from memories.core.scopes import SHARED, Scope, partition_for, visible_to_person
from memories.graph.browse import browse_queryset, browse_view
from memories.graph.selectors import memory_for
from memories.models import Entity, Episode, Fact, Memory

FACTS_PER_PAGE = 100


def get_episode(principal: Principal, *, scope: str, episode_id: uuid.UUID,
                memory: str | None = None, facts_after: int | None = None,
                limit: int = FACTS_PER_PAGE) -> dict[str, Any]:
    """The get_episode tool: the episode in the caller's scope, a page of its facts paid
    for one unit each (a fact and the earlier version it replaced are kept or cut together,
    so a cut page never shows a replacement without what it replaced)."""
    graph = memory_for(principal, memory)
    detail = episode_in(principal, graph, episode_id, scope=scope,
                        facts_after=facts_after, limit=limit)
    facts, replaced = detail["facts"], detail["replaced"]
    replaced_ids = {fact["superseded_by"] for fact in replaced}
    costs = [1 + (fact["fact_id"] in replaced_ids) for fact in facts]
    with transaction.atomic():
        paid = metering.charge(principal, graph, "get_episode", costs)
    reply = detail | {"units": sum(costs[:paid]), "cut_by_allowance": paid < len(facts)}
    if reply["cut_by_allowance"]:
        kept = facts[:paid]
        kept_ids = {fact["fact_id"] for fact in kept}
        reply |= {
            "facts": kept, "facts_next": kept[-1]["position"],
            "replaced": [fact for fact in replaced if fact["superseded_by"] in kept_ids],
            "message": metering.cut_short(
                paid, len(facts), what="facts of this page",
                rule="one unit per fact returned, an earlier version it replaced included")
                + f" facts_after: {kept[-1]['position']} continues from here.",
        }
    return reply


def episode_detail(principal: Principal, memory_name: str | None, episode_id: uuid.UUID, *,
                   scope: Scope | None = None, facts_after: int | None = None,
                   limit: int = FACTS_PER_PAGE) -> dict[str, Any]:
    """episode_in for the memory named `memory_name` (None: the principal's default)."""
    return episode_in(principal, memory_for(principal, memory_name), episode_id, scope=scope,
                      facts_after=facts_after, limit=limit)


def episode_in(principal: Principal, memory: Memory, episode_id: uuid.UUID, *,
               scope: Scope | None = None, facts_after: int | None = None,
               limit: int = FACTS_PER_PAGE) -> dict[str, Any]:
    """The episode with a page of its facts (in the order written, after position
    `facts_after`), the earlier versions those facts replaced, and the entities it created.

    `scope` None reads as a person does (shared and their own solo partitions); an agent's
    tool passes its scope and sees only that partition. An episode of another partition,
    memory or account is NotFound with the message of one that does not exist.
    """
    where = (visible_to_person(principal) if scope is None
             else Q(partition=partition_for(principal, scope)))
    episode = (Episode.objects.filter(where, pk=episode_id, memory_id=memory.pk)
               .select_related("holder", "key")
               .only("id", "partition", "session_id", "project", "tool", "created_at",
                     "holder__username", "holder__email", "key__name", "key__prefix")
               .first())
    if episode is None:
        raise NotFound(f"no episode {episode_id} in memory {memory.name!r}", field="episode_id",
                       fix="pass an episode_id that write_episode returned for this memory")
    facts = Fact.objects.filter(episode_id=episode.pk, memory_id=memory.pk)
    if facts_after is not None:
        facts = facts.filter(position__gt=facts_after)
    rows = list(browse_queryset(facts).order_by("position")[:limit + 1])
    more, rows = len(rows) > limit, rows[:limit]
    replaced = browse_queryset(Fact.objects.filter(
        memory_id=memory.pk, superseded_by_id__in=[row.pk for row in rows])) if rows else []
    entities = (Entity.objects.filter(episode_id=episode.pk, memory_id=memory.pk)
                .only("id", "name", "type").order_by("name"))
    holder, key = episode.holder, episode.key
    return {
        "episode_id": str(episode.pk), "memory": memory.name,
        "scope": "shared" if episode.partition == SHARED else "solo",
        "session_id": episode.session_id or None, "project": episode.project or None,
        "created_at": episode.created_at,
        "written_by": {"tool": episode.tool,
                       "holder": (holder.email or holder.username) if holder else None,
                       "key": f"{key.name} (em_{key.prefix}_…)" if key else None},
        "facts": [browse_view(row) | {"live": row.superseded_at is None,
                                      "position": row.position} for row in rows],
        "facts_next": rows[-1].position if more else None,
        "replaced": [browse_view(row) for row in replaced],
        "entities_created": [{"id": str(e.pk), "name": e.name, "type": e.type}
                             for e in entities],
        "units": 0,
    }
