"""Real usage rows for the usage tests: charges through the ledger, or records backdated;
and the plans, which a transactional test's flush may have emptied (seeded again here)."""

from __future__ import annotations

from datetime import datetime

from billing.ledger import LedgerMeter
from billing.models import Plan, UsagePeriod, UsageRecord
from billing.plans import month_of, seed_plans
from memories.models import Memory


def charge(actor, units: int, *, memory: str = "default", tool: str = "write_episode") -> None:
    """`units` charged to the actor's key now, exactly as the engine's meter charges."""
    target = Memory.objects.get(account=actor.account, name=memory)
    LedgerMeter().charge(actor.principal, target, tool, [1] * units, whole=True)


def record(actor, units: int, at: datetime, *, memory: str = "default",
           tool: str = "query_memory") -> None:
    """A usage record at `at` (another day or month) and its ledger row, kept equal."""
    target = Memory.objects.get(account=actor.account, name=memory)
    month = month_of(at)
    UsageRecord.objects.create(account=actor.account, month=month, at=at, key=actor.key,
                               key_prefix=actor.key.prefix, memory=target,
                               memory_name=target.name, tool=tool, units=units)
    period, _ = UsagePeriod.objects.get_or_create(account=actor.account, month=month)
    period.units += units
    period.save(update_fields=["units"])


def plan(slug: str) -> Plan:
    seed_plans()
    return Plan.objects.get(slug=slug)


def sell(slug: str, price_id: str) -> Plan:
    """Give the plan a Stripe price, so the page offers it for sale."""
    sold = plan(slug)
    sold.stripe_price_id = price_id
    sold.save(update_fields=["stripe_price_id"])
    return sold
