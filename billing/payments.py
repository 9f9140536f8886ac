"""Stripe Checkout (upgrades) and the customer portal (card, invoices, cancel)."""

from __future__ import annotations

import logging
import re
from typing import Literal

import stripe
from django.conf import settings
from django.db import transaction

from accounts.models import Account
from billing.models import Plan, Subscription
from billing.plans import default_plan, effective_plan
from billing.stripe_api import client
from echomem.errors import EchoError

logger = logging.getLogger(__name__)
# Stripe puts the session's id where success_url says {CHECKOUT_SESSION_ID}; Checkout
# Session ids are cs_ and letters, digits or underscores.
CHECKOUT_RETURN_QUERY = "checkout=success&session_id={CHECKOUT_SESSION_ID}"
_CHECKOUT_SESSION_ID = re.compile(r"cs_[A-Za-z0-9_]{1,250}")
CheckoutState = Literal["paid", "unpaid"]


class BillingNotConfigured(EchoError):
    code = "billing_not_configured"


class StripeUnavailable(EchoError):
    """Stripe refused or could not be reached; the message says what it said."""

    code = "stripe_unavailable"


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
    if not plan.stripe_price_id:
        raise EchoError(
            f"the {plan.name} plan is not for sale here: it has no Stripe price",
            field="plan",
            fix="choose another plan, or the operator sets this plan's Stripe price id "
                "(`echo-memory manage billing_plans --set-price`, docs/billing.md)")
    current = effective_plan(account.pk)
    if not current.is_default:
        raise EchoError(
            f"this account already pays for the {current.name} plan; a second Checkout would "
            "start a second subscription", field="plan",
            fix="switch plans under Manage billing, where Stripe changes the current "
                "subscription and prorates the difference")
    customer = ensure_customer(account=account, email=email)
    session = _stripe_call(lambda stripe_client: stripe_client.v1.checkout.sessions.create(
        params={
            "mode": "subscription",
            "customer": customer,
            "line_items": [{"price": plan.stripe_price_id, "quantity": 1}],
            # The webhook finds the account by these even if the customer row is not ours yet.
            "client_reference_id": str(account.pk),
            "metadata": {"account_id": str(account.pk)},
            "subscription_data": {"metadata": {"account_id": str(account.pk)}},
            "success_url": success_url,
            "cancel_url": cancel_url,
        }))
    return session.url


def checkout_state(*, account: Account, session_id: str) -> CheckoutState | None:
    """Whether the Checkout session `session_id`, one `account` started, is paid, as Stripe
    says. The page Checkout returns to believes this, never its own address: None when the
    id cannot be a session's (it is then not sent to Stripe), is not this account's, or
    Stripe cannot be asked now."""
    if not configured() or not _CHECKOUT_SESSION_ID.fullmatch(session_id):
        return None
    try:
        session = _stripe_call(
            lambda stripe_client: stripe_client.v1.checkout.sessions.retrieve(session_id)
        ).to_dict()
    except StripeUnavailable as failure:
        logger.warning("Checkout session %s was not read: %s", session_id, failure.message)
        return None
    if session.get("client_reference_id") != str(account.pk):
        return None
    paid = (session.get("status") == "complete"
            and session.get("payment_status") in ("paid", "no_payment_required"))
    return "paid" if paid else "unpaid"


def portal_url(*, account: Account, return_url: str) -> str:
    """The Stripe customer portal for `account` (card, invoices, cancel)."""
    _require_configured()
    customer = (Subscription.objects.filter(account=account)
                .values_list("stripe_customer_id", flat=True).first())
    if not customer:
        raise EchoError(
            "this account has never paid through Stripe, so there is nothing to manage yet",
            field="account", fix="choose a paid plan first (the upgrade button)")
    session = _stripe_call(lambda stripe_client: stripe_client.v1.billing_portal.sessions.create(
        params={"customer": customer, "return_url": return_url}))
    return session.url


def ensure_customer(*, account: Account, email: str) -> str:
    """The account's Stripe customer id, created (and stored) on first use.

    No Subscription row means the default plan, so creating one on the default plan
    changes nothing the account can observe; it is where the customer id lives.
    """
    with transaction.atomic():
        subscription, _ = (Subscription.objects.select_for_update()
                           .get_or_create(account=account, defaults={
                               "plan": default_plan(), "status": Subscription.Status.ACTIVE}))
        if subscription.stripe_customer_id:
            return subscription.stripe_customer_id
        # Created while the row is locked, so two clicks at once make one customer.
        customer = _stripe_call(lambda stripe_client: stripe_client.v1.customers.create(params={
            "email": email, "name": account.name,
            "metadata": {"account_id": str(account.pk)}}))
        subscription.stripe_customer_id = customer.id
        subscription.save(update_fields=["stripe_customer_id", "updated_at"])
        return customer.id


def _stripe_call(call):
    try:
        return call(client())
    except stripe.StripeError as failure:
        raise StripeUnavailable(
            f"Stripe did not accept the request: {failure.user_message or failure}",
            fix="try again in a minute; if it keeps failing, the operator checks the Stripe "
                "keys and dashboard") from None
