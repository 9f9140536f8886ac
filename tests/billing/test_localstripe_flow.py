"""The real SDK against localstripe, whose signed webhooks reach our view on a live server:
customer -> subscription -> webhook -> plan -> allowance, and back to Free on cancel."""

import json
import logging
import secrets
from concurrent.futures import ThreadPoolExecutor

import httpx

from accounts.models import Account
from billing import stripe_api
from billing.ledger import allowance
from billing.models import Plan, StripeEvent, Subscription
from billing.payments import ensure_customer
from billing.plans import default_plan
from memories.erasure.services import account_delete
from tests.billing.conftest import (
    WEBHOOK_PATH,
    WEBHOOK_SECRET,
    event,
    subscribe,
    wait_for,
)
from tests.billing.stripe_stub import stripe_signature


def test_a_subscription_in_stripe_moves_the_allowance_and_cancelling_returns_to_free(
        stripe_webhooks, pro_plan, alice):
    free_units = Plan.objects.get(slug="free").monthly_units
    assert allowance(alice.account.id).allowed == free_units
    customer = ensure_customer(account=alice.account, email="alice@example.com")

    subscription = subscribe(customer, pro_plan.stripe_price_id)

    wait_for("the plan to become Pro",
             lambda: allowance(alice.account.id).allowed == pro_plan.monthly_units)
    row = Subscription.objects.get(account=alice.account)
    assert (row.stripe_subscription_id, row.status) == (subscription, "active")
    assert row.current_period_end is not None
    created = StripeEvent.objects.get(type="customer.subscription.created",
                                      payload__data__object__id=subscription)
    assert created.outcome == "plan pro (active)" and created.attempts == 1

    stripe_api.client().v1.subscriptions.cancel(subscription)

    wait_for("the plan to fall back to Free",
             lambda: allowance(alice.account.id).allowed == free_units)
    row.refresh_from_db()
    assert row.status == "canceled"
    assert StripeEvent.objects.get(type="customer.subscription.deleted",
                                   payload__data__object__id=subscription
                                   ).outcome == "canceled: plan free"


def test_deleting_an_account_cancels_its_stripe_subscription(
        stripe_settings, pro_plan, alice, django_capture_on_commit_callbacks):
    customer = ensure_customer(account=alice.account, email="alice@example.com")
    subscription = subscribe(customer, pro_plan.stripe_price_id)
    Subscription.objects.filter(account=alice.account).update(
        stripe_subscription_id=subscription, plan=pro_plan)

    with django_capture_on_commit_callbacks(execute=True):
        account_delete(alice.principal, confirm=alice.account.name)

    assert not Account.objects.filter(pk=alice.account.pk).exists()
    assert stripe_api.client().v1.subscriptions.retrieve(subscription).status == "canceled"


def test_an_unreachable_stripe_never_blocks_deleting_an_account(
        stripe_settings, alice, caplog, django_capture_on_commit_callbacks):
    Subscription.objects.create(account=alice.account, plan=Plan.objects.get(slug="pro"),
                                stripe_customer_id="cus_gone", stripe_subscription_id="sub_gone")
    stripe_settings.STRIPE_API_BASE = "http://127.0.0.1:9"

    with caplog.at_level(logging.WARNING, logger="billing.cancellation"), \
            django_capture_on_commit_callbacks(execute=True):
        account_delete(alice.principal, confirm=alice.account.name)

    assert not Account.objects.filter(pk=alice.account.pk).exists()
    [warning] = [r for r in caplog.records if r.name == "billing.cancellation"]
    assert "sub_gone" in warning.getMessage() and "could not be cancelled" in warning.getMessage()
    assert warning.exc_info is None


def test_one_event_delivered_twice_at_once_is_handled_once(stripe_webhooks, alice):
    customer = "cus_" + secrets.token_hex(6)
    Subscription.objects.create(account=alice.account, plan=default_plan(),
                                stripe_customer_id=customer)
    invoice = {"id": "in_race", "object": "invoice", "customer": customer}
    sent = event("invoice.payment_failed", invoice)
    payload = json.dumps(sent).encode()
    headers = {"Content-Type": "application/json",
               "Stripe-Signature": stripe_signature(payload, WEBHOOK_SECRET)}
    url = stripe_webhooks.url + WEBHOOK_PATH

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda _: httpx.post(url, content=payload, headers=headers,
                                                     timeout=30), range(4)))

    assert [a.status_code for a in answers] == [200] * 4
    stored = StripeEvent.objects.get(pk=sent["id"])
    assert stored.attempts == 1 and stored.outcome.startswith("past due")
