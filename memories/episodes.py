"""Provenance: one episode, who wrote it from where, and every fact and entity it wrote.

Plain dicts in the tools' shapes (fact_view), so the engine's `get_episode` tool can
return `episode_detail` as it is, with `scope` naming the agent's partition.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Q

from accounts.principal import Principal
from echomem.errors import NotFound
from memories.browse import browse_queryset, browse_view
from memories.models import Entity, Episode, Fact
from memories.scopes import SHARED, Scope, partition_for, visible_to_person
from memories.selectors import memory_for

FACTS_PER_PAGE = 100


def episode_detail(principal: Principal, memory_name: str | None, episode_id: uuid.UUID, *,
                   scope: Scope | None = None, facts_after: int | None = None,
                   limit: int = FACTS_PER_PAGE) -> dict[str, Any]:
    """The episode with a page of its facts (in the order written, after position
    `facts_after`), the earlier versions those facts replaced, and the entities it created.

    `scope` None reads as a person does (shared and their own solo partitions); an agent's
    tool passes its scope and sees only that partition.
    """
    memory = memory_for(principal, memory_name)
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
        "facts": [browse_view(row) | {"live": row.superseded_at is None} for row in rows],
        "facts_next": rows[-1].position if more else None,
        "replaced": [browse_view(row) for row in replaced],
        "entities_created": [{"id": str(e.pk), "name": e.name, "type": e.type}
                             for e in entities],
        "units": 0,
    }
