"""Usage as people and agents read it: the billing page, the dashboard banner and
GET /api/v1/usage all take their figures from here, so they never disagree.

Each selector is one query and zero-fills what the ledger has no row for (a day or a
month without calls is a 0, not a gap). Names come from the usage records' own
snapshots, because the ledger outlives the keys and memories it counts; the current
name is added where the object still exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.db.models import Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from accounts.models import ApiKey
from billing.alerts import FULL_PERCENT, WARN_PERCENT
from billing.ledger import Allowance, metered
from billing.models import Plan, Subscription, UsagePeriod, UsageRecord
from billing.plans import default_plan, month_of, next_month, provides_plan
from memories.models import Memory


@dataclass(frozen=True)
class Standing(Allowance):
    """The account's plan in force, the units it used this month, and its subscription."""

    subscription: Subscription | None = None

    @property
    def percent(self) -> int:
        """Whole percent used, floored (99.9% is not shown as full), at most 100."""
        if self.allowed == 0:
            return 100
        return min(100, self.used * 100 // self.allowed)

    @property
    def level(self) -> int | None:
        """FULL_PERCENT, WARN_PERCENT or None: which banner the dashboard shows."""
        if self.used >= self.allowed:
            return FULL_PERCENT
        if self.used * 100 >= self.allowed * WARN_PERCENT:
            return WARN_PERCENT
        return None



def standing(account_id: int, *, now: datetime | None = None) -> Standing:
    """The plan in force (as billing.plans.effective_plan decides) and this month's units,
    in one query: every signed-in page asks (the banner), so it must stay cheap."""
    now = now or timezone.now()
    month = month_of(now)
    subscription = Subscription.objects.filter(account_id=account_id)
    rows = list(
        Plan.objects.filter(Q(is_default=True) | Q(pk=Subquery(subscription.values("plan_id"))))
        .annotate(
            used=Subquery(UsagePeriod.objects.filter(account_id=account_id, month=month)
                          .values("units")),
            subscription_id=Subquery(subscription.values("pk")),
            subscribed_plan_id=Subquery(subscription.values("plan_id")),
            subscription_status=Subquery(subscription.values("status")),
            subscription_grace=Subquery(subscription.values("grace_until")),
            subscription_customer=Subquery(subscription.values("stripe_customer_id")),
            subscription_period_end=Subquery(subscription.values("current_period_end")),
            subscription_cancels=Subquery(subscription.values("cancel_at_period_end")),
        ))
    if not any(plan.is_default for plan in rows):
        default_plan()  # a database emptied by hand (or a test's flush): seed, ask again
        return standing(account_id, now=now)
    first = rows[0]
    used = first.used or 0
    current = next(plan for plan in rows if plan.is_default)
    subscription_row = None
    if first.subscription_id is not None:
        subscribed = next((p for p in rows if p.pk == first.subscribed_plan_id), None)
        subscription_row = Subscription(
            pk=first.subscription_id, account_id=account_id, plan=subscribed or current,
            status=first.subscription_status, grace_until=first.subscription_grace,
            stripe_customer_id=first.subscription_customer,
            current_period_end=first.subscription_period_end,
            cancel_at_period_end=first.subscription_cancels)
        if subscribed is not None and provides_plan(subscription_row, now=now):
            current = subscribed
    return Standing(current, month, used, subscription_row)


@dataclass(frozen=True)
class Amount:
    """Units on one day or in one month."""

    start: date
    units: int


def daily_units(account_id: int, month: date, *, now: datetime | None = None) -> list[Amount]:
    """Each day of `month` (UTC) up to today, zero-filled; a past month has all its days."""
    today = (now or timezone.now()).astimezone(UTC).date()
    end = min(next_month(month) - timedelta(days=1), today)
    by_day = dict(
        UsageRecord.objects.filter(account_id=account_id, month=month)
        .annotate(day=TruncDate("at", tzinfo=UTC)).values("day")
        .annotate(total=Sum("units")).values_list("day", "total"))
    days = (end - month).days + 1
    return [Amount(day, by_day.get(day, 0))
            for day in (month + timedelta(days=n) for n in range(max(0, days)))]


def monthly_units(account_id: int, months: int = 12, *,
                  now: datetime | None = None) -> list[Amount]:
    """The last `months` calendar months, this one included, oldest first, zero-filled.

    From the ledger's month rows: each is the sum of that month's usage records.
    """
    wanted = _months_back(month_of(now), months)
    by_month = dict(UsagePeriod.objects.filter(account_id=account_id, month__gte=wanted[0])
                    .values_list("month", "units"))
    return [Amount(month, by_month.get(month, 0)) for month in wanted]


def _months_back(month: date, count: int) -> list[date]:
    index = month.year * 12 + month.month - 1
    return [date((index - n) // 12, (index - n) % 12 + 1, 1) for n in reversed(range(count))]


@dataclass
class Share:
    """Units of one memory, key or tool in a month. `state` is "active", "revoked" or
    "deleted" (the object is gone; `name` is what it was called when last charged)."""

    name: str
    units: int
    state: str = "active"
    detail: str = ""  # a key's agent label
    prefix: str = ""  # a key's public part, em_<prefix>_…
    last_at: datetime | None = None
    percent: int = 0


def units_by_memory(account_id: int, month: date) -> list[Share]:
    """Units per memory, most first; a renamed memory is one row under its current name."""
    rows = (UsageRecord.objects.filter(account_id=account_id, month=month)
            .values("memory_id", "memory_name")
            .annotate(total=Sum("units"), last=Max("at"),
                      current=Subquery(Memory.objects.filter(pk=OuterRef("memory_id"),
                                                             account_id=account_id)
                                       .values("name"))))
    shares: dict[object, Share] = {}
    for row in sorted(rows, key=lambda r: r["last"]):  # the latest snapshot name wins
        share = shares.setdefault(row["memory_id"], Share("", 0))
        share.units += row["total"]
        share.last_at = row["last"]
        share.name = row["current"] or row["memory_name"]
        share.state = "active" if row["current"] is not None else "deleted"
    return _ranked(shares.values())


def units_by_key(account_id: int, month: date) -> list[Share]:
    """Units per API key, most first: the key's current name, or for a deleted key its
    prefix (the records' snapshot); revoked and deleted keys are marked."""
    keys = ApiKey.objects.filter(pk=OuterRef("key_id"), account_id=account_id)
    rows = (UsageRecord.objects.filter(account_id=account_id, month=month)
            .values("key_id", "key_prefix")
            .annotate(total=Sum("units"), last=Max("at"),
                      name=Subquery(keys.values("name")),
                      agent=Subquery(keys.values("tool")),
                      revoked_at=Subquery(keys.values("revoked_at")),
                      exists=Subquery(keys.values("pk"))))
    shares: dict[object, Share] = {}
    for row in sorted(rows, key=lambda r: r["last"]):
        share = shares.setdefault(row["key_id"], Share("", 0))
        share.units += row["total"]
        share.last_at = row["last"]
        share.prefix = f"em_{row['key_prefix']}_…" if row["key_prefix"] else ""
        if row["exists"] is None:
            share.name, share.state = share.prefix or "a deleted key", "deleted"
        else:
            share.name = row["name"]
            share.detail = row["agent"] or ""
            share.state = "revoked" if row["revoked_at"] is not None else "active"
    return _ranked(shares.values())


def units_by_tool(account_id: int, month: date) -> list[Share]:
    """Units per tool (write_episode, query_memory, ...), most first."""
    rows = (UsageRecord.objects.filter(account_id=account_id, month=month)
            .values("tool").annotate(total=Sum("units"), last=Max("at")))
    return _ranked([Share(r["tool"], r["total"], last_at=r["last"]) for r in rows])


def _ranked(shares) -> list[Share]:
    shares = sorted(shares, key=lambda s: (-s.units, s.name))
    total = sum(s.units for s in shares)
    for share in shares:
        share.percent = round(share.units * 100 / total) if total else 0
    return shares


@dataclass
class UsageReport:
    """Everything the billing page and GET /api/v1/usage show. On a self-hosted box
    (`metered` False) nothing is counted: the standing is None and the lists are empty."""

    metered: bool
    month: date
    standing: Standing | None = None
    daily: list[Amount] = field(default_factory=list)
    monthly: list[Amount] = field(default_factory=list)
    by_memory: list[Share] = field(default_factory=list)
    by_key: list[Share] = field(default_factory=list)
    by_tool: list[Share] = field(default_factory=list)


def usage_report(account_id: int, *, now: datetime | None = None) -> UsageReport:
    now = now or timezone.now()
    month = month_of(now)
    if not metered():
        return UsageReport(metered=False, month=month)
    return UsageReport(
        metered=True, month=month, standing=standing(account_id, now=now),
        daily=daily_units(account_id, month, now=now),
        monthly=monthly_units(account_id, now=now),
        by_memory=units_by_memory(account_id, month),
        by_key=units_by_key(account_id, month),
        by_tool=units_by_tool(account_id, month))


def summary_of(current: Standing | None) -> dict:
    """The headline figures as plain data (the API's `summary`): plan, month, used,
    allowed, remaining, percent, resets_at, requests_per_minute, metered. None (a
    self-hosted box) gives `metered: False` and nulls."""
    if current is None:
        return {"metered": False, "plan": None, "plan_name": None, "month": None,
                "used": None, "allowed": None, "remaining": None, "percent": None,
                "resets_at": None, "requests_per_minute": None}
    return {"metered": True, "plan": current.plan.slug, "plan_name": current.plan.name,
            "month": current.month, "used": current.used, "allowed": current.allowed,
            "remaining": current.remaining, "percent": current.percent,
            "resets_at": current.resets_at,
            "requests_per_minute": current.plan.requests_per_minute}


def usage_summary(account_id: int, *, now: datetime | None = None) -> dict:
    return summary_of(standing(account_id, now=now) if metered() else None)
