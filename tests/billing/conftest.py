"""Stripe under test: the real SDK against localstripe, and signed events like Stripe's."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable

import pytest
import stripe

from billing.models import Plan
from billing.plans import seed_plans
from billing.stripe_api import client
from tests.billing.localstripe_server import LocalStripe
from tests.billing.stripe_stub import StripeStub

WEBHOOK_SECRET = "whsec_test_echo"
WEBHOOK_PATH = "/billing/stripe/webhook"


@pytest.fixture(scope="session")
def localstripe():
    server = LocalStripe().start()
    yield server
    server.stop()


@pytest.fixture
def stripe_settings(settings, localstripe):
    """The hosted shape with Stripe configured, the SDK pointed at localstripe."""
    settings.SELF_HOSTED = False
    settings.STRIPE_SECRET_KEY = "sk_test_echo_" + secrets.token_hex(4)
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    settings.STRIPE_API_BASE = localstripe.url
    settings.PAYMENT_GRACE_DAYS = 7
    localstripe.stop_webhooks()
    yield settings
    localstripe.stop_webhooks()



@pytest.fixture
def stub(stripe_settings, localstripe):
    """Stripe's Checkout and portal pages on localstripe (tests/billing/stripe_stub.py),
    without webhooks: the plan in the database changes only when a test sends one."""
    server = StripeStub(localstripe_url=localstripe.url).start()
    stripe_settings.STRIPE_API_BASE = server.url
    yield server
    server.stop()

@pytest.fixture
def stripe_webhooks(stripe_settings, localstripe, live_server, transactional_db):
    """localstripe signs and delivers its events to our real view on the live server."""
    localstripe.deliver_webhooks(live_server.url + WEBHOOK_PATH, WEBHOOK_SECRET)
    return live_server


@pytest.fixture
def pro_plan(stripe_settings, db) -> Plan:
    """Pro, sold at a price that exists in localstripe (a legacy Plan: it has no Prices)."""
    seed_plans()
    price_id = "price_pro_" + secrets.token_hex(4)
    client().v1.plans.create(params={"id": price_id, "amount": 2900, "currency": "usd",
                                     "interval": "month", "product": {"name": "Pro"}})
    plan = Plan.objects.get(slug="pro")
    plan.stripe_price_id = price_id
    plan.save(update_fields=["stripe_price_id"])
    return plan


def subscribe(customer: str, price_id: str) -> str:
    """What Checkout does once the card is entered: a paid subscription for the customer."""
    stripe_client = client()
    card = stripe_client.v1.payment_methods.create(params={"type": "card", "card": {
        "number": "4242424242424242", "exp_month": 12, "exp_year": 2035, "cvc": "123"}})
    stripe_client.v1.payment_methods.attach(card.id, params={"customer": customer})
    stripe_client.v1.customers.update(customer, params={
        "invoice_settings": {"default_payment_method": card.id}})
    return stripe_client.v1.subscriptions.create(params={
        "customer": customer, "items": [{"plan": price_id}]}).id


def wait_for(what: str, check: Callable[[], object], timeout: float = 20) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout}s for {what}")
        time.sleep(0.2)


def signed_post(http_client, event: dict, *, secret: str = WEBHOOK_SECRET, at: int | None = None):
    """POST an event to the webhook view exactly as Stripe sends it."""
    return post_signed(http_client, json.dumps(event).encode(), secret=secret, at=at)


def post_signed(http_client, payload: bytes, *, secret: str = WEBHOOK_SECRET,
                at: int | None = None):
    """POST any body with a valid signature, made by Stripe's SDK for `at` (default now)."""
    signature = stripe.WebhookSignature.generate_signature_header(payload.decode(), secret,
                                                                  timestamp=at)
    return http_client.post(WEBHOOK_PATH, data=payload, content_type="application/json",
                            HTTP_STRIPE_SIGNATURE=signature)


def event(event_type: str, obj: dict, *, created: int | None = None) -> dict:
    return {"id": "evt_" + secrets.token_hex(8), "object": "event", "type": event_type,
            "created": int(time.time()) if created is None else created, "livemode": False,
            "api_version": "2026-10-28.endive", "data": {"object": obj}}


def subscription_object(subscription_id: str, customer: str, price_id: str, *,
                        status: str = "active", cancel_at_period_end: bool = False,
                        period_end: int | None = None) -> dict:
    """A subscription as the pinned API version shapes it (the period on the item)."""
    period_end = period_end or int(time.time()) + 30 * 86400
    return {"id": subscription_id, "object": "subscription", "customer": customer,
            "status": status, "cancel_at_period_end": cancel_at_period_end, "metadata": {},
            "items": {"object": "list", "data": [{
                "id": "si_" + secrets.token_hex(6), "object": "subscription_item",
                "price": {"id": price_id, "object": "price"},
                "current_period_end": period_end}]}}
