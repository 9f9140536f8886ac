"""What a person sees of each memory (DESIGN, "People in the browser"): counts over the
shared partition and their own keys' solo partitions, never another holder's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Q

from accounts.principal import Principal
from memories.core.scopes import visible_to_person
from memories.models import Entity, Fact, Memory


@dataclass(frozen=True)
class MemoryOverview:
    memory: Memory
    entities: int
    live_facts: int
    superseded_facts: int
    waiting_for_vector: int
    last_write: datetime | None


def memory_overview(principal: Principal,
                    memories: Iterable[Memory] | None = None) -> list[MemoryOverview]:
    """Each memory (all of the account's, or the page given) with its counts, in three
    queries however many there are."""
    if memories is None:
        memories = Memory.objects.filter(account_id=principal.account_id).order_by("name")
    memories = list(memories)
    ids = [memory.pk for memory in memories]
    facts = {row["memory_id"]: row for row in (
        Fact.objects.filter(visible_to_person(principal), memory_id__in=ids,
                            memory__account_id=principal.account_id)
        .values("memory_id").order_by()
        .annotate(live=Count("id", filter=Q(superseded_at__isnull=True)),
                  superseded=Count("id", filter=Q(superseded_at__isnull=False)),
                  waiting=Count("id", filter=Q(embedding__isnull=True)),
                  last=Max("created_at")))}
    entities = dict(Entity.objects.filter(visible_to_person(principal), memory_id__in=ids,
                                          memory__account_id=principal.account_id)
                    .values("memory_id").order_by().annotate(n=Count("id"))
                    .values_list("memory_id", "n"))
    empty = {"live": 0, "superseded": 0, "waiting": 0, "last": None}
    return [MemoryOverview(memory, entities.get(memory.pk, 0),
                           (row := facts.get(memory.pk, empty))["live"], row["superseded"],
                           row["waiting"], row["last"])
            for memory in memories]


def account_memories(account_id: int):
    """The account's memories by name (a queryset: pages paginate it, a form offers it)."""
    return Memory.objects.filter(account_id=account_id).order_by("name")


def other_memory_names(memory: Memory) -> list[str]:
    """The names of the account's other memories, where its keys may move to."""
    return list(account_memories(memory.account_id).exclude(pk=memory.pk)
                .values_list("name", flat=True))


def memory_count(account_id: int) -> int:
    return Memory.objects.filter(account_id=account_id).count()
