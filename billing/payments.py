"""Stripe Checkout (upgrades) and the customer portal (card, invoices, cancel)."""

from __future__ import annotations

from django.conf import settings

from accounts.models import Account
from billing.models import Plan
from echomem.errors import EchoError


class BillingNotConfigured(EchoError):
    code = "billing_not_configured"


def configured() -> bool:
    return bool(getattr(settings, "STRIPE_SECRET_KEY", ""))


def _require_configured() -> None:
    if not configured():
        raise BillingNotConfigured(
            "billing is not configured on this server, so plans cannot be changed here",
            fix="the operator sets ECHO_MEMORY_STRIPE_SECRET_KEY and "
                "ECHO_MEMORY_STRIPE_WEBHOOK_SECRET (docs/billing.md)")


def checkout_url(*, account: Account, plan: Plan, email: str, success_url: str,
                 cancel_url: str) -> str:
    """A Stripe Checkout page that subscribes `account` to `plan`."""
    _require_configured()
    raise NotImplementedError("filled in by the Stripe work")


def portal_url(*, account: Account, return_url: str) -> str:
    """The Stripe customer portal for `account` (card, invoices, cancel)."""
    _require_configured()
    raise NotImplementedError("filled in by the Stripe work")
