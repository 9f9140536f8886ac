"""Recall saves: an agent records that a recalled fact spared the user a re-explanation, and
the dashboard shows which agent's facts spared which other agent (the person's visible
partitions only) this month."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Count

from accounts.principal import Principal
from audit.chain import RECALL_SAVED, Change, record
from echomem.errors import NotFound
from memories.core.scopes import partition_for, visible_to_person
from memories.graph.selectors import memory_for
from memories.graph.services import hold_memory
from memories.models import Fact, RecallSave


@dataclass(frozen=True)
class SavesBetween:
    writer_tool: str
    writer: str
    reader_tool: str
    reader: str
    saves: int


def month_start(now: datetime | None = None) -> datetime:
    """Months are calendar months in UTC, as usage is."""
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0,
                                                microsecond=0)


def recall_saves_this_month(principal: Principal, *, most: int = 10) -> list[SavesBetween]:
    """The pairs (writer agent, reader agent) with the most saves, in one query."""
    rows = (RecallSave.objects
            .filter(visible_to_person(principal), memory__account_id=principal.account_id,
                    created_at__gte=month_start())
            .values("writer_tool", "writer_holder__email", "writer_holder__username",
                    "reader_tool", "reader_holder__email", "reader_holder__username")
            .annotate(saves=Count("id")).order_by("-saves", "writer_tool", "reader_tool")[:most])
    return [SavesBetween(row["writer_tool"],
                         row["writer_holder__email"] or row["writer_holder__username"] or "",
                         row["reader_tool"],
                         row["reader_holder__email"] or row["reader_holder__username"] or "",
                         row["saves"]) for row in rows]


@transaction.atomic
def record_recall_save(principal: Principal, *, scope: str, fact_id: uuid.UUID, note: str,
                       session_id: str = "", memory: str | None = None) -> dict[str, Any]:
    """The writer comes from the fact's own edge and the reader from the key, never the caller."""
    graph = memory_for(principal, memory)
    hold_memory(graph)
    partition = partition_for(principal, scope)
    fact = (Fact.objects.select_related("source", "target")
            .filter(pk=fact_id, memory=graph, partition=partition).first())
    if fact is None:
        raise NotFound(
            f"fact {fact_id} not found in scope {scope!r} of memory {graph.name!r}",
            field="fact_id", fix="pass a fact_id returned by query_memory with the same scope "
                                 "and memory",
        )
    save = RecallSave.objects.create(
        fact=fact, memory=graph, partition=partition,
        writer_holder_id=fact.written_by_holder_id, writer_tool=fact.written_by_tool,
        reader_holder_id=principal.holder_id, reader_tool=principal.tool,
        reader_key_id=principal.key_id, note=note, session_id=session_id,
    )
    writer = {"holder_id": fact.written_by_holder_id, "tool": fact.written_by_tool}
    reader = {"holder_id": principal.holder_id, "tool": principal.tool}
    record(actor=principal, memory=graph, partition=partition,
           session_id=session_id, changes=[Change(
               RECALL_SAVED, str(save.pk),
               after={"fact_id": str(fact.pk), "note": note,
                      "writer": writer, "reader": reader})])
    return {"recorded": True, "recall_save_id": str(save.pk), "fact_id": str(fact.pk),
            "writer": writer, "reader": reader, "memory": graph.name, "units": 0}
