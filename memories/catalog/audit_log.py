"""The audit log as people read it in the browser: filtered, paged, exported, verified.

Who sees what follows DESIGN's "People in the browser", whatever the role:
- graph events (a fact, an entity, a recall save) of the `shared` partition of every
  memory, and of the person's own solo partitions; no one, owners included, sees another
  holder's solo events, because those carry that holder's private facts' text;
- account-level events (no memory, or the account partition: keys, members, roles,
  memories created or deleted). Owners and admins see all of them, since they manage
  keys and members; a member sees the ones they caused, as the dashboard shows a member
  only their own keys.
An agent's `get_audit_log` (memories/graph/selectors.py) stays a graph-only view of one partition.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.db.models import Max, Min, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from accounts.connections import app_names
from accounts.models import ApiKey, Membership
from accounts.principal import Principal
from audit.chain import ACCOUNT_PARTITION
from audit.models import AuditChainHead, AuditEvent
from audit.verify import audit_verify
from echomem.errors import Forbidden
from memories.core.scopes import SHARED
from memories.models import Memory

PAGE_SIZE = 50
EXPORT_CHUNK = 1000
MAY_SEE_ALL_ACCOUNT_EVENTS = {Membership.Role.OWNER, Membership.Role.ADMIN}
MAY_VERIFY = MAY_SEE_ALL_ACCOUNT_EVENTS
ACCOUNT_LEVEL = Q(memory_id__isnull=True) | Q(partition=ACCOUNT_PARTITION)
# How far apart two servers' clocks may be and a time range still be read by seq exactly.
CLOCK_SKEW = timedelta(minutes=5)
MAX_SEQ = 2**63 - 1  # seq is a bigint


@dataclass(frozen=True)
class AuditFilter:
    """Every field narrows the log; `account_level` keeps only events in no memory."""

    memory_id: int | None = None
    account_level: bool = False
    action: str = ""
    # Who acted: a person (by any door), a key, or a connected app (its `oauth:` tool label).
    holder_id: int | None = None
    key_id: int | None = None
    app: str = ""
    tool: str = ""
    session_prefix: str = ""
    since: datetime | None = None
    until: datetime | None = None


def visible_events(principal: Principal, role: str) -> QuerySet[AuditEvent]:
    """The account's events this person may read (see the module docstring for why)."""
    graph = ((Q(partition=SHARED) | Q(partition__startswith=principal.solo_prefix))
             & ~ACCOUNT_LEVEL)
    account = ACCOUNT_LEVEL
    if role not in MAY_SEE_ALL_ACCOUNT_EVENTS:
        account &= Q(holder_id=principal.holder_id)
    return AuditEvent.objects.filter(graph | account, account_id=principal.account_id)


def filtered_events(principal: Principal, role: str, wanted: AuditFilter) -> QuerySet[AuditEvent]:
    events = visible_events(principal, role)
    if wanted.account_level:
        events = events.filter(ACCOUNT_LEVEL)
    if wanted.memory_id is not None:
        events = events.filter(memory_id=wanted.memory_id)
    if wanted.action:
        events = events.filter(action=wanted.action)
    if wanted.holder_id is not None:
        events = events.filter(holder_id=wanted.holder_id)
    if wanted.key_id is not None:
        events = events.filter(key_id=wanted.key_id)
    if wanted.app:
        events = events.filter(tool=wanted.app)
    if wanted.tool:
        events = events.filter(tool=wanted.tool)
    if wanted.session_prefix:
        # startswith escapes % and _ in the value: a prefix is matched literally.
        events = events.filter(session_id__startswith=wanted.session_prefix)
    return _in_time(events, principal.account_id, wanted)


def _in_time(events: QuerySet[AuditEvent], account_id: int,
             wanted: AuditFilter) -> QuerySet[AuditEvent]:
    """The time range, also as a range of seq, so that a page read newest first by seq
    starts at the range's end instead of walking every later event to get there (a month
    at the old end of a million events: 850,000 rows). An account's events are stamped
    under its chain head's lock, so seq follows time up to how far two servers' clocks
    disagree (CLOCK_SKEW): every event after the first one stamped more than CLOCK_SKEW
    past `until` is past `until` too, and every event before the last one stamped more
    than CLOCK_SKEW before `since` is before it. Each of those two events is one probe of
    the time index; the time conditions stay, so the result is exactly the range."""
    account = AuditEvent.objects.filter(account_id=account_id)
    if wanted.since is not None:
        before = (account.filter(created_at__lt=wanted.since - CLOCK_SKEW)
                  .order_by("-created_at").values("seq")[:1])
        events = events.filter(created_at__gte=wanted.since,
                               seq__gt=Coalesce(Subquery(before), 0))
    if wanted.until is not None:
        after = (account.filter(created_at__gt=wanted.until + CLOCK_SKEW)
                 .order_by("created_at").values("seq")[:1])
        events = events.filter(created_at__lte=wanted.until,
                               seq__lt=Coalesce(Subquery(after), MAX_SEQ))
    return events


def _distinct(account_id: int, column: str) -> list[str]:
    """The account's distinct values of `column`, by skipping through its (account, column,
    seq) index one value at a time: a few dozen index probes where DISTINCT would read
    every event (a second and more at a million). Over the whole account, not only what
    this person may see: actions and tool labels are names, never a holder's text."""
    assert column in ("action", "tool")  # interpolated below: never a caller's string
    table = AuditEvent._meta.db_table
    sql = f"""
        WITH RECURSIVE found(value) AS (
            (SELECT {column} FROM {table} WHERE account_id = %s ORDER BY {column} LIMIT 1)
            UNION ALL
            SELECT (SELECT {column} FROM {table} WHERE account_id = %s AND {column} > value
                    ORDER BY {column} LIMIT 1)
            FROM found WHERE value IS NOT NULL)
        SELECT value FROM found WHERE value IS NOT NULL"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [account_id, account_id])
        return [value for (value,) in cursor.fetchall()]


def filter_choices(principal: Principal, role: str) -> dict[str, Any]:
    """What the filter offers: the account's memories, people and keys (revoked ones too,
    their events remain), the connected apps, tools and actions its log holds, and the time
    span the visible log covers."""
    visible = visible_events(principal, role)
    span = visible.aggregate(oldest=Min("created_at"), newest=Max("created_at"))
    account_id = principal.account_id
    tools = _distinct(account_id, "tool")
    people = (get_user_model().objects.filter(memberships__account_id=account_id)
              .order_by("email", "username", "pk").values_list("pk", "email", "username"))
    return {
        "memories": list(Memory.objects.filter(account_id=account_id)
                         .order_by("name").values_list("pk", "name")),
        "people": [(pk, email or username) for pk, email, username in people],
        "keys": {key.pk: key for key in ApiKey.objects.filter(account_id=account_id)
                 .only("pk", "name", "prefix", "tool", "revoked_at").order_by("name", "pk")},
        "apps": sorted(app_names(account_id=account_id, tools=tools).items(),
                       key=lambda app: (app[1].lower(), app[0])),
        "tools": tools,
        "actions": _distinct(account_id, "action"),
        "oldest": span["oldest"], "newest": span["newest"],
    }


@dataclass(frozen=True)
class FieldChange:
    """One field of a change as text: `before`/`after` are "" where the side has no value."""

    field: str
    before: str
    after: str
    changed: bool  # an update that set this field anew (a creation changes nothing)


@dataclass(frozen=True)
class EventRow:
    """One event with who did it resolved to names a person recognises."""

    event: AuditEvent
    holder: str
    key: ApiKey | None
    app: str | None = None  # the connected app (OAuth client) that acted for the holder

    @property
    def actor(self) -> str:
        """Who acted, in words: the person, or the app they connected acting for them."""
        return f"{self.app} (connected app) for {self.holder}" if self.app else self.holder

    @property
    def erased(self) -> bool:
        return self.event.erased_at is not None

    @property
    def account_level(self) -> bool:
        return self.event.memory_id is None or self.event.partition == ACCOUNT_PARTITION

    @property
    def scope(self) -> str:
        if self.account_level:
            return "account"
        return SHARED if self.event.partition == SHARED else "solo"

    @property
    def key_label(self) -> str:
        if self.key is not None:
            return str(self.key)
        return f"key {self.event.key_id} (deleted)" if self.event.key_id else ""

    @property
    def changes(self) -> list[FieldChange]:
        """Each field of the before/after snapshots that has a value, side by side."""
        before, after = self.event.before or {}, self.event.after or {}
        update = bool(before) and bool(after)
        fields = list(before) + [name for name in after if name not in before]
        shown = [(name, _shown(before.get(name)), _shown(after.get(name))) for name in fields]
        return [FieldChange(name, old, new, update and bool(new) and old != new)
                for name, old, new in shown if old or new]


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else as_json(value)


def _rows(events: list[AuditEvent], keys: dict[int, ApiKey] | None, account_id: int,
          ) -> list[EventRow]:
    """Names for a batch of events in three queries at most, whatever the batch size (the
    third only when a connected app acted)."""
    holder_ids = {e.holder_id for e in events if e.holder_id is not None}
    holders = {user.pk: user.email or user.username
               for user in get_user_model().objects.filter(pk__in=holder_ids)
               .only("pk", "email", "username")} if holder_ids else {}
    if keys is None:
        key_ids = {e.key_id for e in events if e.key_id is not None}
        keys = {key.pk: key for key in ApiKey.objects.filter(pk__in=key_ids,
                                                             account_id=account_id)
                .only("pk", "name", "prefix", "tool")} if key_ids else {}
    apps = app_names(account_id=account_id, tools={e.tool for e in events if e.key_id is None})
    return [EventRow(e, holders.get(e.holder_id, "the server" if e.holder_id is None
                                    else f"user {e.holder_id} (removed)"),
                     keys.get(e.key_id), apps.get(e.tool)) for e in events]


@dataclass(frozen=True)
class AuditPage:
    rows: list[EventRow]
    older_than: int | None  # the seq to page back from, when older events match
    newer_than: int | None  # the seq to page forward from, when newer events match


def audit_page(principal: Principal, role: str, wanted: AuditFilter, *,
               before: int | None = None, after: int | None = None,
               keys: dict[int, ApiKey] | None = None, size: int = PAGE_SIZE) -> AuditPage:
    """One page of the filtered log, newest first, by keyset on seq: `before` pages to
    older events, `after` to newer ones. A constant number of queries for any log size:
    the page and one more row (whether there is more in the direction read), and one
    probe the other way."""
    events = filtered_events(principal, role, wanted)
    if after is not None:
        page = list(events.filter(seq__gt=after).order_by("seq")[:size + 1])
        newer, page = len(page) > size, page[:size][::-1]
    else:
        bounded = events.filter(seq__lt=before) if before is not None else events
        page = list(bounded.order_by("-seq")[:size + 1])
        older, page = len(page) > size, page[:size]
    if not page:
        return AuditPage([], None, None)
    newest, oldest = page[0].seq, page[-1].seq
    # Ordered probes, not EXISTS: without the ORDER BY the planner may pick a bitmap scan
    # of a whole filter index (800 ms at a million events) where walking seq takes one row.
    if after is not None:
        older = _one(events.filter(seq__lt=oldest).order_by("-seq"))
    else:
        newer = _one(events.filter(seq__gt=newest).order_by("seq"))
    return AuditPage(_rows(page, keys, principal.account_id),
                     older_than=oldest if older else None,
                     newer_than=newest if newer else None)


def _one(events: QuerySet[AuditEvent]) -> bool:
    return bool(events.values_list("seq", flat=True)[:1])


def export_rows(principal: Principal, role: str, wanted: AuditFilter, *,
                chunk: int = EXPORT_CHUNK) -> Iterator[EventRow]:
    """Every filtered event in chain order, read `chunk` at a time by keyset on seq, so a
    long log is never held in memory."""
    events = filtered_events(principal, role, wanted).order_by("seq")
    last = 0
    while True:
        batch = list(events.filter(seq__gt=last)[:chunk])
        if not batch:
            return
        yield from _rows(batch, None, principal.account_id)
        last = batch[-1].seq


EXPORT_COLUMNS = ["seq", "at", "memory", "scope", "action", "object_id", "session_id",
                  "holder", "key", "app", "tool", "erased", "before", "after", "hash"]


def export_record(row: EventRow) -> dict[str, Any]:
    """One event as exported; before/after are the snapshots, None once erased."""
    event = row.event
    return {
        "seq": event.seq, "at": event.created_at.isoformat(), "memory": event.memory_name,
        "scope": row.scope, "action": event.action, "object_id": event.object_id,
        "session_id": event.session_id, "holder": row.holder, "key": row.key_label,
        "app": row.app or "", "tool": event.tool, "erased": row.erased, "before": event.before,
        "after": event.after, "hash": event.hash,
    }


def as_json(value: Any) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)


@dataclass(frozen=True)
class ChainResult:
    ok: bool
    events: int
    broken_seq: int | None


def verify_chain(principal: Principal, role: str) -> ChainResult:
    """Verify the whole account's chain. Only owners and admins may: it reads every event,
    other holders' solo ones included (it reports only where a break is, never text)."""
    if role not in MAY_VERIFY:
        raise Forbidden("only an owner or an admin of the account may verify its audit chain",
                        field="account", fix="ask an owner or admin of this account")
    ok, broken = audit_verify(principal.account_id)
    head = AuditChainHead.objects.filter(account_id=principal.account_id).first()
    return ChainResult(ok, head.seq if head else 0, broken)
