"""Reading a memory page by page, as a person in the browser sees it.

Lists are keyset-paginated (a cursor holds the last row's sort key), so the tenth page
of a 10,000-fact memory costs what the first does: an index range, never an OFFSET.
A person reads one partition at a time: `shared`, or the solo partition of one of
their own tools (DESIGN, "People in the browser").
"""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import BooleanField, F, QuerySet
from django.db.models.expressions import RawSQL

from accounts.principal import Principal
from echomem.errors import ValidationFailed
from memories.core.scopes import SHARED
from memories.graph.selectors import FACT_VIEW_FIELDS, fact_view
from memories.models import Episode, Fact, Memory
from memories.search.window import Window

PAGE_SIZE = 50
# What a browser fact row shows beyond fact_view: links to its endpoints.
BROWSE_FIELDS = (*FACT_VIEW_FIELDS, "partition")


@dataclass(frozen=True)
class ScopeChoice:
    """A partition a person may read: its form value, its label, and who reads it."""

    value: str
    label: str
    partition: str

    def principal(self, person: Principal) -> Principal:
        """The principal whose `scope` names this partition for the engine's tools."""
        if self.partition == SHARED:
            return person
        return Principal(account_id=person.account_id, holder_id=person.holder_id,
                         tool=self.partition.removeprefix(person.solo_prefix))

    @property
    def engine_scope(self) -> str:
        return "shared" if self.partition == SHARED else "solo"


def scope_choices(principal: Principal, memory: Memory, written=Episode) -> list[ScopeChoice]:
    """`shared`, then the solo partition of each of the person's tools that wrote here
    (rows of `written`: episodes for the graph, notes for notes)."""
    # Episodes, not facts: every fact's partition has its episode, and there are fewer.
    solo = (written.objects.filter(memory_id=memory.pk,
                                   partition__startswith=principal.solo_prefix)
            .values_list("partition", flat=True).distinct().order_by("partition"))
    return [ScopeChoice(SHARED, "Shared (whole account)", SHARED)] + [
        ScopeChoice(scope_value(principal, partition),
                    f"Solo: {partition.removeprefix(principal.solo_prefix)} (only you)",
                    partition)
        for partition in solo]


def scope_value(principal: Principal, partition: str) -> str:
    """How a page names a partition: `shared`, or `solo:<tool>` for the person's own."""
    return partition if partition == SHARED else "solo:" + partition.removeprefix(
        principal.solo_prefix)


@dataclass(frozen=True)
class FactPage:
    facts: list[dict[str, Any]]
    next_cursor: str | None


def browse_view(fact: Fact) -> dict[str, Any]:
    """fact_view (which carries the episode_id) plus the ids of its endpoints."""
    return fact_view(fact) | {"source_id": str(fact.source_id),
                              "target_id": str(fact.target_id)}


def with_links(memory: Memory, facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The engine's fact views (query_memory, trace_cause) with the ids of their endpoints,
    which a page links to, in one query."""
    ids = (Fact.objects.filter(memory_id=memory.pk, pk__in=[f["fact_id"] for f in facts])
           .values_list("id", "source_id", "target_id"))
    links = {str(pk): {"source_id": str(source), "target_id": str(target)}
             for pk, source, target in ids}
    return [fact | links[fact["fact_id"]] for fact in facts if fact["fact_id"] in links]


def browse_queryset(queryset: QuerySet) -> QuerySet:
    return queryset.select_related("source", "target").only(*BROWSE_FIELDS)


def fact_page(memory: Memory, partition: str, *, superseded: bool = False,
              cursor: str | None = None, limit: int = PAGE_SIZE,
              window: Window | None = None) -> FactPage:
    """Live facts newest first, or superseded ones most recently replaced first. With a
    `window` set to a time (as_of, valid_as_of), the facts query_memory reads at that time,
    by the same condition, newest learned first."""
    if window is not None and (window.as_of or window.valid_as_of):
        facts = Fact.objects.filter(window.q(), memory_id=memory.pk, partition=partition)
        return keyset_page(facts, "created_at", cursor, limit)
    facts = Fact.objects.filter(memory_id=memory.pk, partition=partition,
                                superseded_at__isnull=not superseded)
    return keyset_page(facts, "superseded_at" if superseded else "created_at", cursor, limit)


def keyset_page(facts: QuerySet, by: str, cursor: str | None,
                limit: int = PAGE_SIZE, *, by_sql: str | None = None,
                sorted_by_index: bool = True) -> FactPage:
    """`facts` ordered by (`by`, position, id) descending, the page after `cursor`. `by` is
    a column, or an annotation whose SQL `by_sql` repeats for the cursor's comparison.
    Without an index in that order (`sorted_by_index` False) the page's ids are picked
    first, in a query of their own, so the sort reads fact rows alone and only the page is
    joined to its entities (one statement with the ids as a subquery let the planner,
    misjudging the rows, run that subquery once per fact)."""
    if cursor:
        at, position, fact_id = decode_cursor(cursor)
        key = by_sql or f'"memories_fact"."{by}"'
        # A row comparison: one index range instead of three OR'ed conditions.
        facts = facts.filter(RawSQL(
            f'({key}, "memories_fact"."position", "memories_fact"."id") < (%s, %s, %s)',
            [at, position, fact_id], output_field=BooleanField()))
    order = (F(by).desc(), "-position", "-id")
    if not sorted_by_index:
        facts = facts.filter(pk__in=list(facts.order_by(*order).values_list("pk", flat=True)
                                         [:limit + 1]))
    rows = list(browse_queryset(facts).order_by(*order)[:limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return FactPage([browse_view(row) for row in rows],
                    encode_cursor(getattr(rows[-1], by), rows[-1].position, rows[-1].pk)
                    if more else None)


def encode_cursor(at: datetime, position: int, fact_id: uuid.UUID) -> str:
    raw = f"{at.isoformat()}|{position}|{fact_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, position, fact_id = raw.split("|")
        return datetime.fromisoformat(at), int(position), uuid.UUID(fact_id)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValidationFailed("this page link is not one the server made", field="after",
                               fix="follow the 'next page' link unchanged, or start again "
                                   "from the first page") from None

