"""Stripe's webhook events: verified, stored by id, then handled once.

Each event is stored before it is handled, so a replay finds the row and does nothing
and a failure stays visible (attempts, last_error) until Stripe's retry, or
`echo-memory manage billing_events --retry-failed`, handles it. Handling reads the
stored payload, never the request, so a retry from the command is the same as Stripe's.

Stripe does not promise order. Subscription.stripe_state_at remembers when Stripe
created the newest event applied to the account; an older event changes nothing, and a
deleted subscription is never revived by a late update of the same subscription.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import stripe
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Account
from billing import rates
from billing.models import Plan, StripeEvent, Subscription
from billing.plans import default_plan
from billing.stripe_api import client
from echomem.errors import EchoError

logger = logging.getLogger(__name__)

Payload = dict[str, Any]


class WebhookNotConfigured(EchoError):
    code = "billing_not_configured"


class BadSignature(EchoError):
    code = "bad_signature"


class HandlingFailed(EchoError):
    """The event is stored with its error; answering non-2xx makes Stripe deliver it again."""

    code = "handling_failed"


class UnknownPrice(Exception):
    """A subscription to a price no Plan row names: an operator's fix, then a retry."""


def receive(payload: bytes, signature: str | None) -> StripeEvent:
    """Verify, store and handle one delivery; the stored event says what happened."""
    secret = settings.STRIPE_WEBHOOK_SECRET
    if not secret:
        raise WebhookNotConfigured(
            "Stripe webhooks are not configured on this server",
            fix="the operator sets ECHO_MEMORY_STRIPE_WEBHOOK_SECRET (docs/billing.md)")
    try:
        stripe.Webhook.construct_event(payload, signature or "", secret)
        data = json.loads(payload)
        event_id, event_type, created = data["id"], data["type"], int(data["created"])
    except stripe.SignatureVerificationError:
        raise BadSignature(
            "the Stripe-Signature header does not match this payload and the webhook secret",
            field="Stripe-Signature",
            fix="send the body unchanged; the endpoint's signing secret (whsec_...) must be "
                "ECHO_MEMORY_STRIPE_WEBHOOK_SECRET") from None
    except (ValueError, KeyError, TypeError):
        raise BadSignature("the body is not a Stripe event (id, type, created)",
                           field="body", fix="send Stripe's event JSON unchanged") from None
    StripeEvent.objects.get_or_create(id=event_id, defaults={
        "type": event_type[:100], "payload": data,
        "created": datetime.fromtimestamp(created, UTC)})
    return handle(event_id)


def handle(event_id: str) -> StripeEvent:
    """Handle a stored event unless it already was; one transaction, outcome recorded."""
    try:
        with transaction.atomic():
            # The row lock makes two deliveries of one event at once handle it once.
            event = StripeEvent.objects.select_for_update().get(pk=event_id)
            if event.handled_at is not None:
                return event
            handler = HANDLERS.get(event.type)
            outcome = handler(event.payload) if handler else f"ignored: {event.type}"
            event.outcome = outcome[:200]
            event.handled_at = timezone.now()
            event.attempts += 1
            event.last_error = ""
            event.save(update_fields=["outcome", "handled_at", "attempts", "last_error"])
        # A plan may have changed: this process's cached rate limits start again (the
        # others' expire within billing.rates.PLAN_RATE_TTL_SECONDS).
        rates.forget()
        return event
    except Exception as failure:
        error = f"{type(failure).__name__}: {failure}"
        StripeEvent.objects.filter(pk=event_id).update(
            attempts=F("attempts") + 1, last_error=error, outcome="failed")
        # One line, no traceback: the error is stored with the event, and Stripe retries.
        logger.warning("Stripe event %s failed: %s", event_id, error)
        raise HandlingFailed(f"event {event_id} was stored but handling failed: {error}",
                             fix="fix the cause; Stripe retries, or run `echo-memory manage "
                                 "billing_events --retry " + event_id + "`") from None


def handle_failed(*, limit: int = 100) -> tuple[int, int]:
    """Handle again, oldest first, up to `limit` stored events whose handling failed;
    returns (handled now, still failing)."""
    ids = list(StripeEvent.objects.filter(handled_at__isnull=True).order_by("created")
               .values_list("id", flat=True)[:limit])
    failing = 0
    for event_id in ids:
        try:
            handle(event_id)
        except HandlingFailed:
            failing += 1
    return len(ids) - failing, failing


# Handlers: each takes the event's payload and returns its outcome; an exception leaves
# the event unhandled (stored with the error) and rolls back what it did.

def _checkout_completed(event: Payload) -> str:
    session = event["data"]["object"]
    account_id = session.get("client_reference_id") or (session.get("metadata") or {}).get(
        "account_id")
    account = Account.objects.filter(pk=_int_or_none(account_id)).first()
    if account is None:
        return f"ignored: account {account_id!r} does not exist"
    row = _locked_row_of_account(account)
    if session.get("customer"):
        row.stripe_customer_id = session["customer"]
    if not session.get("subscription"):
        row.save()
        return f"linked customer {row.stripe_customer_id}; no subscription in the session"
    # The session does not say which plan: the subscription, as Stripe has it now, does.
    subscription = client().v1.subscriptions.retrieve(session["subscription"]).to_dict()
    return _apply_subscription(row, subscription, _created(event))


def _subscription_changed(event: Payload) -> str:
    subscription = event["data"]["object"]
    row = _locked_row_of_customer(subscription.get("customer"),
                                  (subscription.get("metadata") or {}).get("account_id"))
    if row is None:
        return f"ignored: customer {subscription.get('customer')} is no account's"
    return _apply_subscription(row, subscription, _created(event))


def _subscription_deleted(event: Payload) -> str:
    subscription = event["data"]["object"]
    row = _locked_row_of_customer(subscription.get("customer"))
    if row is None:
        return f"ignored: customer {subscription.get('customer')} is no account's"
    if stale := _stale(row, _created(event)):
        return stale
    if row.stripe_subscription_id and row.stripe_subscription_id != subscription["id"]:
        return f"ignored: {subscription['id']} is not the account's current subscription"
    row.plan = default_plan()
    row.status = Subscription.Status.CANCELED
    row.stripe_subscription_id = subscription["id"]
    row.cancel_at_period_end = False
    row.grace_until = None
    row.stripe_state_at = _created(event)
    row.save()
    return f"canceled: plan {row.plan.slug}"


def _invoice_row(event: Payload) -> Subscription | str:
    """The account's locked row an invoice event applies to, or why it applies to none."""
    invoice = event["data"]["object"]
    row = _locked_row_of_customer(invoice.get("customer"))
    if row is None:
        return f"ignored: customer {invoice.get('customer')} is no account's"
    return _stale(row, _created(event)) or _not_current(row, invoice) or row


def _payment_failed(event: Payload) -> str:
    row = _invoice_row(event)
    if isinstance(row, str):
        return row
    row.status = Subscription.Status.PAST_DUE
    # Stripe retries a failed payment several times: the grace runs from the first failure.
    if row.grace_until is None:
        row.grace_until = _created(event) + timedelta(days=settings.PAYMENT_GRACE_DAYS)
    row.stripe_state_at = _created(event)
    row.save()
    return f"past due: plan {row.plan.slug} until {row.grace_until:%Y-%m-%d %H:%M} UTC"


def _invoice_paid(event: Payload) -> str:
    row = _invoice_row(event)
    if isinstance(row, str):
        return row
    if row.status == Subscription.Status.CANCELED:
        return "ignored: the subscription is canceled; a payment does not revive it"
    row.status = Subscription.Status.ACTIVE
    row.grace_until = None
    row.stripe_state_at = _created(event)
    row.save()
    return f"paid: plan {row.plan.slug} active"


HANDLERS: dict[str, Callable[[Payload], str]] = {
    "checkout.session.completed": _checkout_completed,
    "customer.subscription.created": _subscription_changed,
    "customer.subscription.updated": _subscription_changed,
    "customer.subscription.deleted": _subscription_deleted,
    "invoice.payment_failed": _payment_failed,
    "invoice.paid": _invoice_paid,
    "invoice.payment_succeeded": _invoice_paid,
}

# Stripe's statuses that our model has no word for, by what they mean for the plan.
_STATUS = {"incomplete_expired": Subscription.Status.CANCELED,
           "paused": Subscription.Status.UNPAID}


def _apply_subscription(row: Subscription, subscription: Payload, at: datetime) -> str:
    if stale := _stale(row, at):
        return stale
    if (row.stripe_subscription_id == subscription["id"]
            and row.status == Subscription.Status.CANCELED):
        return f"ignored: {subscription['id']} was deleted; a late update does not revive it"
    item = subscription["items"]["data"][0]
    price_id = (item.get("price") or item.get("plan") or {}).get("id", "")
    plan = Plan.objects.filter(stripe_price_id=price_id).first() if price_id else None
    if plan is None:
        raise UnknownPrice(f"no plan has the Stripe price id {price_id!r}: set it with "
                           "`echo-memory manage billing_plans --set-price`, then retry")
    status = subscription["status"]
    row.plan = plan
    row.status = _STATUS.get(status, status)
    row.stripe_subscription_id = subscription["id"]
    row.cancel_at_period_end = bool(subscription.get("cancel_at_period_end"))
    # Since the 2025-03-31 API versions the period lives on each item, not the subscription.
    period_end = item.get("current_period_end") or subscription.get("current_period_end")
    row.current_period_end = datetime.fromtimestamp(period_end, UTC) if period_end else None
    if row.status in (Subscription.Status.ACTIVE, Subscription.Status.TRIALING):
        row.grace_until = None
    elif row.status == Subscription.Status.PAST_DUE and row.grace_until is None:
        row.grace_until = at + timedelta(days=settings.PAYMENT_GRACE_DAYS)
    row.stripe_state_at = at
    row.save()
    return f"plan {plan.slug} ({row.status})"


def _stale(row: Subscription, at: datetime) -> str | None:
    # Strictly older: Stripe's clock counts seconds, and one action's events share one.
    if row.stripe_state_at is not None and at < row.stripe_state_at:
        return (f"stale: created {at:%Y-%m-%d %H:%M:%S}, before the state applied at "
                f"{row.stripe_state_at:%Y-%m-%d %H:%M:%S}; nothing changed")
    return None


def _not_current(row: Subscription, invoice: Payload) -> str | None:
    # The subscription moved under `parent` in newer API versions; localstripe has both.
    subscription = invoice.get("subscription") or (
        ((invoice.get("parent") or {}).get("subscription_details") or {}).get("subscription"))
    if subscription and row.stripe_subscription_id and subscription != row.stripe_subscription_id:
        return f"ignored: invoice of {subscription}, not the account's current subscription"
    return None


def _locked_row_of_customer(customer: str | None,
                            account_id: str | None = None) -> Subscription | None:
    if customer:
        row = (Subscription.objects.select_for_update().select_related("plan")
               .filter(stripe_customer_id=customer).first())
        if row is not None:
            return row
    account = Account.objects.filter(pk=_int_or_none(account_id)).first()
    if account is None:
        return None
    row = _locked_row_of_account(account)
    if customer and not row.stripe_customer_id:
        row.stripe_customer_id = customer
    return row


def _locked_row_of_account(account: Account) -> Subscription:
    row, _ = (Subscription.objects.select_for_update().select_related("plan")
              .get_or_create(account=account, defaults={
                  "plan": default_plan(), "status": Subscription.Status.ACTIVE}))
    return row


def _created(event: Payload) -> datetime:
    return datetime.fromtimestamp(int(event["created"]), UTC)


def _int_or_none(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
