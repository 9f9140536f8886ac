"""A fact and its edge's whole history as a person sees it: every version of the same
(source, relation, target) edge, oldest to newest, with when each was learned, when it
was true and when (and by which) it was replaced."""

from __future__ import annotations

import uuid
from typing import Any

from accounts.principal import Principal
from echomem.errors import NotFound
from memories.core.scopes import visible_to_person
from memories.graph.browse import browse_queryset, browse_view
from memories.graph.selectors import memory_for
from memories.models import Fact

# Versions listed on the page; an edge rewritten more often shows its newest ones.
VERSIONS_SHOWN = 100


def fact_history(principal: Principal, memory_name: str, fact_id: uuid.UUID) -> dict[str, Any]:
    memory = memory_for(principal, memory_name)
    fact = browse_queryset(Fact.objects.filter(visible_to_person(principal), pk=fact_id,
                                               memory_id=memory.pk)).first()
    if fact is None:
        raise NotFound(f"no fact {fact_id} in memory {memory.name!r}", field="fact",
                       fix="open the fact from the memory's facts or search")
    edge = (Fact.objects.filter(memory_id=memory.pk, partition=fact.partition,
                                source_id=fact.source_id, target_id=fact.target_id,
                                relation_type=fact.relation_type))
    newest = list(browse_queryset(edge).order_by("-created_at", "-position", "-id")
                  [:VERSIONS_SHOWN + 1])
    versions = [browse_view(version) for version in reversed(newest[:VERSIONS_SHOWN])]
    by_id = {version["fact_id"]: version for version in versions}
    for version in versions:
        version["replaced_by_fact"] = (by_id.get(version["superseded_by"] or "") or {}).get("fact")
    return {"fact": browse_view(fact), "partition": fact.partition, "versions": versions,
            "older_not_shown": len(newest) > VERSIONS_SHOWN}
