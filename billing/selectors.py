"""Reads the billing page makes: the plans on offer and whether Stripe knows the account."""

from __future__ import annotations

from accounts.models import Account
from billing.models import Plan, Subscription

# The checkout form refuses a longer slug before any lookup.
PLAN_SLUG_CHARS = Plan._meta.get_field("slug").max_length


def plans() -> list[Plan]:
    return list(Plan.objects.all())


def plan_by_slug(slug: str) -> Plan | None:
    return Plan.objects.filter(slug=slug).first()


def has_stripe_customer(account: Account) -> bool:
    """Whether the account has paid through Stripe once, so its portal has something."""
    return Subscription.objects.filter(account=account).exclude(stripe_customer_id="").exists()
