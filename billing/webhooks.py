"""Stripe's webhook events: verified, checked, stored by id, then handled once.

Verification follows Stripe's scheme (the `Stripe-Signature` header: `t=<unix time>` and
`v1=` HMAC-SHA256 of `t.body` with the endpoint's secret), checked by Stripe's SDK, and
the signing time must be within TOLERANCE_SECONDS of this server's clock in both
directions: the SDK only refuses signatures that are too old, so one dated in the future
(a replay prepared for later) would be accepted. A signed event that is not one this
server can read (billing/stripe_events.py) is refused and logged, and nothing is stored.

Each event is stored before it is handled, so a replay finds the row and does nothing
and a failure stays visible (attempts, last_error) until Stripe's retry, or
`echo-memory manage billing_events --retry-failed`, handles it. Handling reads the
stored payload, never the request, so a retry from the command is the same as Stripe's.

Stripe does not promise order. Subscription.stripe_state_at remembers when Stripe
created the newest event applied to the account; an older event changes nothing, and a
deleted subscription is never revived by a late update of the same subscription.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import stripe
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Account
from billing import rates, stripe_events
from billing.models import Plan, StripeEvent, Subscription
from billing.plans import default_plan
from billing.stripe_api import client
from billing.stripe_events import CheckoutSession, Event, Invoice, MalformedEvent, StripeShape
from echomem.errors import EchoError, InvalidBody
from echomem.request_body import parse_json

logger = logging.getLogger(__name__)

# How far the signing time may be from this server's clock, either way: the default of
# Stripe's own libraries (five minutes). Stripe signs every delivery, retries included,
# afresh, so a genuine event is never older than its network trip.
TOLERANCE_SECONDS = stripe.Webhook.DEFAULT_TOLERANCE
SIGNATURE_FIX = ("send the body unchanged; the endpoint's signing secret (whsec_...) must be "
                 "ECHO_MEMORY_STRIPE_WEBHOOK_SECRET")
CLOCK_FIX = ("Stripe signs each delivery when it sends it: if genuine events are refused "
             "this way, set this server's clock (NTP)")


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
    """Verify, check, store and handle one delivery; the stored event says what happened.
    A refusal (BadSignature, MalformedEvent) is logged in one line and stores nothing."""
    secret = settings.STRIPE_WEBHOOK_SECRET
    if not secret:
        raise WebhookNotConfigured(
            "Stripe webhooks are not configured on this server",
            fix="the operator sets ECHO_MEMORY_STRIPE_WEBHOOK_SECRET (docs/billing.md)")
    try:
        verify(payload, signature or "", secret)
        data, event = _readable(payload)
    except (BadSignature, MalformedEvent) as refused:
        logger.warning("Stripe webhook refused (%s): %s", refused.code, refused.message)
        raise
    StripeEvent.objects.get_or_create(id=event.id, defaults={
        "type": event.type, "payload": data, "created": event.created_at})
    return handle(event.id)


def verify(payload: bytes, header: str, secret: str, *, now: float | None = None) -> None:
    """Stripe's signature over the body, made within TOLERANCE_SECONDS of `now` either way."""
    try:
        # tolerance=None: the SDK checks only the past; both directions are checked below.
        stripe.WebhookSignature.verify_header(payload, header, secret, tolerance=None)
    except stripe.SignatureVerificationError:
        raise BadSignature(
            "the Stripe-Signature header does not match this payload and the webhook secret",
            field="Stripe-Signature", fix=SIGNATURE_FIX) from None
    except UnicodeDecodeError:
        raise MalformedEvent("the body is not UTF-8", field="body",
                             fix="send Stripe's event JSON unchanged") from None
    skew = _signed_at(header) - (time.time() if now is None else now)
    if abs(skew) > TOLERANCE_SECONDS:
        when = (f"{int(skew)} seconds ahead of" if skew > 0 else f"{int(-skew)} seconds behind")
        raise BadSignature(
            f"the signature's time (t=) is {when} this server's clock; at most "
            f"{TOLERANCE_SECONDS} seconds either way are accepted (a replay otherwise)",
            field="Stripe-Signature", fix=CLOCK_FIX)


def _signed_at(header: str) -> int:
    """The header's first `t=`, split as Stripe's SDK splits it (which has accepted it)."""
    return next(int(parts[1]) for parts in (item.split("=", 2) for item in header.split(","))
                if parts[0] == "t")


def _readable(payload: bytes) -> tuple[dict[str, Any], Event]:
    """The event as JSON and as this server reads it, or MalformedEvent naming the field."""
    try:
        data = parse_json(payload)
    except InvalidBody as refused:
        raise MalformedEvent(refused.message, field="body", fix=refused.fix) from None
    if not isinstance(data, dict):
        raise MalformedEvent(f"the body is a JSON {type(data).__name__}, not an event object",
                             field="body", fix="send Stripe's event JSON unchanged")
    if unstorable := stripe_events.unstorable_text(data):
        raise unstorable
    event = stripe_events.read(Event, data)
    handler = HANDLERS.get(event.type)
    if handler is not None:  # what its handler reads must be there, with the right types
        stripe_events.read(handler.shape, event.data.object, "data.object")
    return data, event


def handle(event_id: str) -> StripeEvent:
    """Handle a stored event unless it already was; one transaction, outcome recorded."""
    try:
        with transaction.atomic():
            # The row lock makes two deliveries of one event at once handle it once.
            event = StripeEvent.objects.select_for_update().get(pk=event_id)
            if event.handled_at is not None:
                return event
            outcome = _apply(event.payload)
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


def _apply(payload: dict[str, Any]) -> str:
    event = stripe_events.read(Event, payload)
    handler = HANDLERS.get(event.type)
    if handler is None:
        return f"ignored: {event.type}"
    return handler.apply(stripe_events.read(handler.shape, event.data.object, "data.object"),
                         event.created_at)


# Handlers: each takes the event's object, as its shape reads it, and when Stripe created
# the event; it returns its outcome. An exception leaves the event unhandled (stored with
# the error) and rolls back what it did.

def _checkout_completed(session: CheckoutSession, at: datetime) -> str:
    account = Account.objects.filter(pk=_int_or_none(session.account_id)).first()
    if account is None:
        return f"ignored: account {session.account_id!r} does not exist"
    row = _locked_row_of_account(account)
    if session.customer:
        row.stripe_customer_id = session.customer
    if not session.subscription:
        row.save()
        return f"linked customer {row.stripe_customer_id}; no subscription in the session"
    # The session does not say which plan: the subscription, as Stripe has it now, does.
    subscription = client().v1.subscriptions.retrieve(session.subscription).to_dict()
    return _apply_subscription(row, stripe_events.read(stripe_events.Subscription, subscription),
                               at)


def _subscription_changed(subscription: stripe_events.Subscription, at: datetime) -> str:
    row = _locked_row_of_customer(subscription.customer, subscription.account_id)
    if row is None:
        return f"ignored: customer {subscription.customer} is no account's"
    return _apply_subscription(row, subscription, at)


def _subscription_deleted(subscription: stripe_events.Subscription, at: datetime) -> str:
    row = _locked_row_of_customer(subscription.customer)
    if row is None:
        return f"ignored: customer {subscription.customer} is no account's"
    if stale := _stale(row, at):
        return stale
    if row.stripe_subscription_id and row.stripe_subscription_id != subscription.id:
        return f"ignored: {subscription.id} is not the account's current subscription"
    row.plan = default_plan()
    row.status = Subscription.Status.CANCELED
    row.stripe_subscription_id = subscription.id
    row.cancel_at_period_end = False
    row.grace_until = None
    row.stripe_state_at = at
    row.save()
    return f"canceled: plan {row.plan.slug}"


def _invoice_row(invoice: Invoice, at: datetime) -> Subscription | str:
    """The account's locked row an invoice event applies to, or why it applies to none."""
    row = _locked_row_of_customer(invoice.customer)
    if row is None:
        return f"ignored: customer {invoice.customer} is no account's"
    return _stale(row, at) or _not_current(row, invoice) or row


def _payment_failed(invoice: Invoice, at: datetime) -> str:
    row = _invoice_row(invoice, at)
    if isinstance(row, str):
        return row
    row.status = Subscription.Status.PAST_DUE
    # Stripe retries a failed payment several times: the grace runs from the first failure.
    if row.grace_until is None:
        row.grace_until = at + timedelta(days=settings.PAYMENT_GRACE_DAYS)
    row.stripe_state_at = at
    row.save()
    return f"past due: plan {row.plan.slug} until {row.grace_until:%Y-%m-%d %H:%M} UTC"


def _invoice_paid(invoice: Invoice, at: datetime) -> str:
    row = _invoice_row(invoice, at)
    if isinstance(row, str):
        return row
    if row.status == Subscription.Status.CANCELED:
        return "ignored: the subscription is canceled; a payment does not revive it"
    row.status = Subscription.Status.ACTIVE
    row.grace_until = None
    row.stripe_state_at = at
    row.save()
    return f"paid: plan {row.plan.slug} active"


@dataclass(frozen=True)
class Handler:
    shape: type[StripeShape]  # what `apply` reads of the event's data.object
    apply: Callable[[Any, datetime], str]


HANDLERS: dict[str, Handler] = {
    "checkout.session.completed": Handler(CheckoutSession, _checkout_completed),
    "customer.subscription.created": Handler(stripe_events.Subscription, _subscription_changed),
    "customer.subscription.updated": Handler(stripe_events.Subscription, _subscription_changed),
    "customer.subscription.deleted": Handler(stripe_events.Subscription, _subscription_deleted),
    "invoice.payment_failed": Handler(Invoice, _payment_failed),
    "invoice.paid": Handler(Invoice, _invoice_paid),
    "invoice.payment_succeeded": Handler(Invoice, _invoice_paid),
}

# Stripe's statuses that our model has no word for, by what they mean for the plan.
_STATUS = {"incomplete_expired": Subscription.Status.CANCELED,
           "paused": Subscription.Status.UNPAID}


def _apply_subscription(row: Subscription, subscription: stripe_events.Subscription,
                        at: datetime) -> str:
    if stale := _stale(row, at):
        return stale
    if (row.stripe_subscription_id == subscription.id
            and row.status == Subscription.Status.CANCELED):
        return f"ignored: {subscription.id} was deleted; a late update does not revive it"
    price_id = subscription.price_id
    plan = Plan.objects.filter(stripe_price_id=price_id).first() if price_id else None
    if plan is None:
        raise UnknownPrice(f"no plan has the Stripe price id {price_id!r}: set it with "
                           "`echo-memory manage billing_plans --set-price`, then retry")
    row.plan = plan
    row.status = _STATUS.get(subscription.status, subscription.status)
    row.stripe_subscription_id = subscription.id
    row.cancel_at_period_end = subscription.cancel_at_period_end
    row.current_period_end = subscription.period_end
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


def _not_current(row: Subscription, invoice: Invoice) -> str | None:
    subscription = invoice.subscription_id
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


def _int_or_none(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
