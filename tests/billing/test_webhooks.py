"""The webhook endpoint with events signed exactly as Stripe signs them."""

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from billing import stripe_api
from billing.ledger import allowance
from billing.models import Plan, StripeEvent, Subscription
from billing.plans import effective_plan
from tests.billing.conftest import (
    WEBHOOK_PATH,
    event,
    signed_post,
    subscribe,
    subscription_object,
)

NOW = int(time.time())
pytestmark = pytest.mark.django_db


@pytest.fixture
def customer_of_alice(stripe_settings, alice) -> Subscription:
    """Alice's account with a Stripe customer, as checkout_url leaves it."""
    return Subscription.objects.create(account=alice.account, plan=Plan.objects.get(slug="free"),
                                       stripe_customer_id="cus_alice")


@pytest.fixture
def prices(db) -> dict[str, Plan]:
    plans = {}
    for slug in ("pro", "team"):
        plan = Plan.objects.get(slug=slug)
        plan.stripe_price_id = f"price_{slug}_hooks"
        plan.save()
        plans[slug] = plan
    return plans


def test_a_bad_signature_is_refused_and_nothing_is_stored(client, stripe_settings):
    answer = signed_post(client, event("customer.subscription.updated", {}),
                         secret="whsec_someone_else")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_signature"
    assert answer.json()["error"]["field"] == "Stripe-Signature"

    unsigned = client.post(WEBHOOK_PATH, data=b'{"id": "evt_1"}', content_type="application/json")
    assert unsigned.status_code == 400
    assert StripeEvent.objects.count() == 0


def test_a_signature_older_than_stripes_tolerance_is_refused(client, stripe_settings):
    answer = signed_post(client, event("invoice.paid", {}), at=int(time.time()) - 3600)
    assert answer.status_code == 400
    assert StripeEvent.objects.count() == 0


def test_without_a_webhook_secret_the_endpoint_says_so_and_stripe_retries_later(
        client, settings):
    settings.STRIPE_WEBHOOK_SECRET = ""
    answer = signed_post(client, event("invoice.paid", {}))
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "billing_not_configured"
    assert "ECHO_MEMORY_STRIPE_WEBHOOK_SECRET" in answer.json()["error"]["fix"]


def test_only_post_is_accepted(client, stripe_settings):
    assert client.get(WEBHOOK_PATH).status_code == 405


def test_an_unknown_event_type_is_acknowledged_and_recorded(client, stripe_settings):
    sent = event("charge.refunded", {"id": "ch_1", "object": "charge"})
    answer = signed_post(client, sent)
    assert answer.status_code == 200
    stored = StripeEvent.objects.get(pk=sent["id"])
    assert stored.outcome == "ignored: charge.refunded"
    assert stored.handled_at is not None and stored.payload == sent


def test_a_subscription_update_moves_the_plan_and_its_allowance(
        client, customer_of_alice, prices, alice):
    sent = event("customer.subscription.updated", subscription_object(
        "sub_1", "cus_alice", "price_team_hooks", cancel_at_period_end=True,
        period_end=NOW + 86400), created=NOW)
    answer = signed_post(client, sent)
    assert answer.status_code == 200 and answer.json()["outcome"] == "plan team (active)"
    row = Subscription.objects.get(account=alice.account)
    assert (row.plan.slug, row.status, row.stripe_subscription_id) == ("team", "active", "sub_1")
    assert row.cancel_at_period_end is True
    assert row.current_period_end == datetime.fromtimestamp(NOW + 86400, UTC)
    assert allowance(alice.account.id).allowed == prices["team"].monthly_units


def test_a_replayed_event_changes_nothing(client, customer_of_alice, prices, alice):
    sent = event("customer.subscription.updated",
                 subscription_object("sub_1", "cus_alice", "price_pro_hooks"), created=NOW)
    assert signed_post(client, sent).status_code == 200
    # Meanwhile the account moved on (by hand here); the replay must not move it back.
    Subscription.objects.filter(account=alice.account).update(plan=prices["team"])

    again = signed_post(client, sent)
    assert again.status_code == 200 and again.json()["outcome"] == "plan pro (active)"
    assert Subscription.objects.get(account=alice.account).plan.slug == "team"
    assert StripeEvent.objects.get(pk=sent["id"]).attempts == 1


def test_an_event_older_than_the_applied_state_changes_nothing(
        client, customer_of_alice, prices, alice):
    newer = event("customer.subscription.updated",
                  subscription_object("sub_1", "cus_alice", "price_team_hooks"), created=NOW)
    older = event("customer.subscription.updated",
                  subscription_object("sub_1", "cus_alice", "price_pro_hooks"),
                  created=NOW - 60)
    signed_post(client, newer)
    answer = signed_post(client, older)
    assert answer.status_code == 200
    assert answer.json()["outcome"].startswith("stale: ")
    assert StripeEvent.objects.get(pk=older["id"]).outcome.startswith("stale: ")
    assert Subscription.objects.get(account=alice.account).plan.slug == "team"


def test_a_deleted_subscription_is_not_revived_by_a_late_update(
        client, customer_of_alice, prices, alice):
    signed_post(client, event("customer.subscription.created",
                              subscription_object("sub_1", "cus_alice", "price_pro_hooks"),
                              created=NOW - 10))
    deleted = signed_post(client, event(
        "customer.subscription.deleted",
        subscription_object("sub_1", "cus_alice", "price_pro_hooks", status="canceled"),
        created=NOW))
    assert deleted.json()["outcome"] == "canceled: plan free"
    # Created later than the deletion (Stripe may still emit it), same subscription.
    late = signed_post(client, event("customer.subscription.updated",
                                     subscription_object("sub_1", "cus_alice",
                                                         "price_pro_hooks"),
                                     created=NOW + 5))
    assert late.status_code == 200
    assert "does not revive" in late.json()["outcome"]
    row = Subscription.objects.get(account=alice.account)
    assert (row.plan.slug, row.status) == ("free", "canceled")
    assert allowance(alice.account.id).plan.slug == "free"

    # A new subscription (another id) is a new purchase and applies.
    fresh = signed_post(client, event("customer.subscription.created",
                                      subscription_object("sub_2", "cus_alice",
                                                          "price_team_hooks"),
                                      created=NOW + 20))
    assert fresh.json()["outcome"] == "plan team (active)"


def test_a_failed_payment_keeps_the_plan_for_the_grace_period_then_free(
        client, customer_of_alice, prices, alice):
    signed_post(client, event("customer.subscription.created",
                              subscription_object("sub_1", "cus_alice", "price_pro_hooks"),
                              created=NOW - 100))
    invoice = {"id": "in_1", "object": "invoice", "customer": "cus_alice",
               "parent": {"type": "subscription_details",
                          "subscription_details": {"subscription": "sub_1"}}}
    failed = signed_post(client, event("invoice.payment_failed", invoice, created=NOW))
    assert failed.status_code == 200 and failed.json()["outcome"].startswith("past due: plan pro")
    row = Subscription.objects.get(account=alice.account)
    grace = datetime.fromtimestamp(NOW, UTC) + timedelta(days=7)
    assert (row.status, row.grace_until) == ("past_due", grace)
    assert effective_plan(alice.account.id).slug == "pro"
    assert effective_plan(alice.account.id, now=grace + timedelta(seconds=1)).slug == "free"

    # Stripe's next attempt fails too: the grace still runs from the first failure.
    signed_post(client, event("invoice.payment_failed", invoice, created=NOW + 3600))
    assert Subscription.objects.get(account=alice.account).grace_until == grace

    paid = signed_post(client, event("invoice.paid", invoice, created=NOW + 7200))
    assert paid.json()["outcome"] == "paid: plan pro active"
    row.refresh_from_db()
    assert (row.status, row.grace_until) == ("active", None)


def test_a_failure_is_stored_answered_non_2xx_and_retried_until_it_succeeds(
        client, customer_of_alice, prices, alice, caplog, capsys):
    sent = event("customer.subscription.updated",
                 subscription_object("sub_1", "cus_alice", "price_not_a_plan"), created=NOW)
    answer = signed_post(client, sent)
    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == "handling_failed"
    stored = StripeEvent.objects.get(pk=sent["id"])
    assert stored.handled_at is None and stored.attempts == 1 and stored.outcome == "failed"
    assert "price_not_a_plan" in stored.last_error
    assert [r.exc_info for r in caplog.records if r.name == "billing.webhooks"] == [None]

    # Stripe retries before anyone fixes it: still failing, counted.
    assert signed_post(client, sent).status_code == 500
    assert StripeEvent.objects.get(pk=sent["id"]).attempts == 2
    call_command("billing_events", "--failed")
    assert f"{sent['id']}  customer.subscription.updated  FAILED x2" in capsys.readouterr().out

    # The operator names the price; the command handles the stored event.
    prices["pro"].stripe_price_id = "price_not_a_plan"
    prices["pro"].save()
    call_command("billing_events", "--retry-failed")
    assert "handled: plan pro (active)" in capsys.readouterr().out
    stored.refresh_from_db()
    assert stored.handled_at is not None and stored.last_error == "" and stored.attempts == 3
    assert Subscription.objects.get(account=alice.account).plan.slug == "pro"
    # Stripe's own later retry is now a replay.
    assert signed_post(client, sent).json()["outcome"] == "plan pro (active)"


def test_checkout_completion_links_the_account_and_takes_the_plan_from_stripe(
        client, pro_plan, alice):
    customer = stripe_api.client().v1.customers.create(params={"email": "alice@example.com"}).id
    subscription = subscribe(customer, pro_plan.stripe_price_id)
    session = {"id": "cs_test_1", "object": "checkout.session", "mode": "subscription",
               "status": "complete", "payment_status": "paid", "customer": customer,
               "subscription": subscription, "client_reference_id": str(alice.account.pk),
               "metadata": {"account_id": str(alice.account.pk)}}

    answer = signed_post(client, event("checkout.session.completed", session))

    assert answer.status_code == 200 and answer.json()["outcome"] == "plan pro (active)"
    row = Subscription.objects.get(account=alice.account)
    assert (row.stripe_customer_id, row.stripe_subscription_id) == (customer, subscription)
    assert allowance(alice.account.id).allowed == pro_plan.monthly_units


def test_checkout_completion_for_an_account_that_is_gone_is_recorded_as_ignored(
        client, stripe_settings):
    sent = event("checkout.session.completed", {
        "id": "cs_test_2", "object": "checkout.session", "customer": "cus_x",
        "subscription": "sub_x", "client_reference_id": "987654321", "metadata": {}})
    answer = signed_post(client, sent)
    assert answer.status_code == 200
    assert StripeEvent.objects.get(pk=sent["id"]).outcome == "ignored: account '987654321' " \
                                                             "does not exist"


def test_the_events_command_lists_what_handling_did(client, stripe_settings, capsys):
    sent = event("charge.refunded", {"id": "ch_1"})
    signed_post(client, sent)
    call_command("billing_events")
    assert f"{sent['id']}  charge.refunded  ignored: charge.refunded" in capsys.readouterr().out

