"""What recalled facts saved people this month: which agent's facts spared which other agent
a re-explanation, as the dashboard shows it (the person's visible partitions only)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Count

from accounts.principal import Principal
from memories.core.scopes import visible_to_person
from memories.models import RecallSave


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
