"""Which plan an account is on right now, and the calendar months usage is counted in."""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.db.models import Q, Subquery
from django.utils import timezone

from billing.models import Plan, Subscription

# The plans a new installation starts with (migration 0002 writes them; an operator then
# edits rows): slug, name, monthly units, requests per minute per key, price in cents.
STARTING_PLANS = [
    ("free", "Free", 10_000, 240, 0),
    ("pro", "Pro", 1_000_000, 600, 2_900),
    ("team", "Team", 10_000_000, 1_200, 19_900),
]
# Statuses under which Stripe still provides the paid plan (past_due only until grace ends).
PAID_STATUSES = {Subscription.Status.ACTIVE, Subscription.Status.TRIALING,
                 Subscription.Status.PAST_DUE}


def seed_plans(plan_model=Plan) -> None:
    for position, (slug, name, units, rate, cents) in enumerate(STARTING_PLANS):
        plan_model.objects.get_or_create(slug=slug, defaults={
            "name": name, "monthly_units": units, "requests_per_minute": rate,
            "price_cents": cents, "is_default": slug == "free", "position": position})


def default_plan() -> Plan:
    plan = Plan.objects.filter(is_default=True).first()
    if plan is None:  # a database emptied by hand (or by a test's flush): start again
        seed_plans()
        plan = Plan.objects.get(is_default=True)
    return plan


def effective_plan(account_id: int, *, now: datetime | None = None) -> Plan:
    """The subscription's plan while Stripe provides it, else the default plan: one query
    for both candidates (every metered call asks)."""
    subscription = Subscription.objects.filter(account_id=account_id)
    rows = list(Plan.objects.filter(
        Q(is_default=True) | Q(pk=Subquery(subscription.values("plan_id")))).annotate(
        subscription_status=Subquery(subscription.values("status")),
        subscription_grace=Subquery(subscription.values("grace_until")),
        subscribed_plan_id=Subquery(subscription.values("plan_id"))))
    default = next((plan for plan in rows if plan.is_default), None)
    if default is None:
        default = default_plan()
    subscribed = next((p for p in rows if p.pk == p.subscribed_plan_id), None)
    if subscribed is not None and provides_plan(Subscription(
            plan=subscribed, status=subscribed.subscription_status,
            grace_until=subscribed.subscription_grace), now=now):
        return subscribed
    return default


def provides_plan(subscription: Subscription, *, now: datetime | None = None) -> bool:
    if subscription.status not in PAID_STATUSES:
        return False
    if subscription.status == Subscription.Status.PAST_DUE:
        now = now or timezone.now()
        return subscription.grace_until is not None and now < subscription.grace_until
    return True


def month_of(moment: datetime | None = None) -> date:
    """The first day of the calendar month (UTC) that `moment` (default now) falls in."""
    moment = (moment or timezone.now()).astimezone(UTC)
    return moment.date().replace(day=1)


def next_month(month: date) -> date:
    return date(month.year + (month.month == 12), month.month % 12 + 1, 1)


def resets_at(month: date) -> datetime:
    """When the units of `month` reset: midnight UTC on the first of the next month."""
    return datetime.combine(next_month(month), datetime.min.time(), tzinfo=UTC)
