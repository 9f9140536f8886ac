"""What the webhook refuses, signed with Stripe's own SDK as Stripe would sign it: events it
cannot read (each class by its examples: the body, the envelope, the nested fields each
handler reads, text PostgreSQL cannot hold), bodies too large to be an event, and
signatures made outside the tolerance, in the past or in the future. Each refusal is a
JSON 4xx naming the field, logged in one line without a traceback, and stores nothing."""

from __future__ import annotations

import json
import logging
import time

import pytest
import stripe

from billing import webhooks
from billing.models import Plan, StripeEvent, Subscription
from tests.billing.conftest import (
    WEBHOOK_PATH,
    event,
    post_signed,
    signed_post,
    subscription_object,
)

pytestmark = pytest.mark.django_db
NOW = int(time.time())
TOLERANCE = stripe.Webhook.DEFAULT_TOLERANCE  # five minutes: Stripe's libraries' default


@pytest.fixture
def alice_pays(stripe_settings, alice) -> Subscription:
    """Alice's account, a Stripe customer on Pro: a malformed event must not move it."""
    pro = Plan.objects.get(slug="pro")
    pro.stripe_price_id = "price_pro_refusals"
    pro.save()
    return Subscription.objects.create(account=alice.account, plan=pro,
                                       stripe_customer_id="cus_alice",
                                       stripe_subscription_id="sub_1")


def _subscription(**changes) -> dict:
    obj = subscription_object("sub_1", "cus_alice", "price_pro_refusals")
    return {**obj, **changes}


def _with(path: str, value, base: dict | None = None) -> dict:
    """An event for Alice's subscription with one field (a dotted path) replaced."""
    sent = base or event("customer.subscription.updated", _subscription(), created=NOW)
    node, *keys, last = [sent, *path.split(".")]
    for key in keys:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is _MISSING:
        del node[last]
    else:
        node[last] = value
    return sent


_MISSING = object()
CHECKOUT = {"id": "cs_test_1", "object": "checkout.session", "customer": "cus_alice",
            "subscription": "sub_1", "client_reference_id": "1", "metadata": {}}
INVOICE = {"id": "in_1", "object": "invoice", "customer": "cus_alice",
           "parent": {"subscription_details": {"subscription": "sub_1"}}}

# (what, body as sent, the field the refusal must name)
MALFORMED = [
    ("a JSON list", b"[]", "body"),
    ("a list holding the event", json.dumps([event("invoice.paid", INVOICE)]).encode(), "body"),
    ("a JSON string", b'"evt_1"', "body"),
    ("a JSON null", b"null", "body"),
    ("not JSON", b"{\"id\": ", "body"),
    ("NaN", b'{"id": NaN}', "body"),
    ("nested 5,000 deep", b"[" * 5000 + b"]" * 5000, "body"),
    ("an empty object", b"{}", "id"),
    ("type an integer", _with("type", 42), "type"),
    ("type missing", _with("type", _MISSING), "type"),
    ("type of 10,000 characters", _with("type", "a" * 10_000), "type"),
    ("created 1e20", _with("created", 1e20), "created"),
    ("created 10**20", _with("created", 10**20), "created"),
    ("created a string", _with("created", str(NOW)), "created"),
    ("created true", _with("created", True), "created"),
    ("created negative", _with("created", -1), "created"),
    ("created missing", _with("created", _MISSING), "created"),
    ("id of 10,000 characters", _with("id", "evt_" + "a" * 10_000), "id"),
    ("id with a NUL", _with("id", "evt_1\x00"), "id"),
    ("id an integer", _with("id", 12345), "id"),
    ("id not an event's", _with("id", "cus_1"), "id"),
    ("id missing", _with("id", _MISSING), "id"),
    ("data missing", _with("data", _MISSING), "data"),
    ("data a list", _with("data", []), "data"),
    ("data.object a string", _with("data.object", "sub_1"), "data.object"),
    ("a NUL deep inside", _with("data.object.metadata", {"note": "a\x00b"}),
     "data.object.metadata.note"),
    ("a NUL in a key", _with("data.object.metadata", {"a\x00": "b"}), "data.object.metadata"),
    ("a lone surrogate", _with("data.object.metadata", {"note": "\ud800"}),
     "data.object.metadata.note"),
    # What the subscription handlers read.
    ("no items", _with("data.object.items.data", []), "data.object.items.data"),
    ("items missing", _with("data.object.items", _MISSING), "data.object.items"),
    ("a price id that is a number", _with("data.object.items.data.0.price.id", 5),
     "data.object.items.data.0.price.id"),
    ("a period end of 1e20", _with("data.object.items.data.0.current_period_end", 1e20),
     "data.object.items.data.0.current_period_end"),
    ("a status that is a number", _with("data.object.status", 5), "data.object.status"),
    ("a status Stripe does not have", _with("data.object.status", "bogus"),
     "data.object.status"),
    ("a customer that is an object", _with("data.object.customer", {"id": "cus_alice"}),
     "data.object.customer"),
    ("cancel_at_period_end a string", _with("data.object.cancel_at_period_end", "yes"),
     "data.object.cancel_at_period_end"),
    ("metadata a list", _with("data.object.metadata", ["account_id"]), "data.object.metadata"),
    ("a subscription id with a slash",
     _with("data.object.id", "sub_1/../../v1/customers"), "data.object.id"),
    # What the checkout handler reads.
    ("a checkout's subscription an object",
     _with("data.object.subscription", {"id": "sub_1"},
           event("checkout.session.completed", dict(CHECKOUT))), "data.object.subscription"),
    ("a checkout's account of 10,000 characters",
     _with("data.object.client_reference_id", "1" * 10_000,
           event("checkout.session.completed", dict(CHECKOUT))),
     "data.object.client_reference_id"),
    # What the invoice handlers read.
    ("an invoice's customer a number",
     _with("data.object.customer", 7, event("invoice.paid", json.loads(json.dumps(INVOICE)))),
     "data.object.customer"),
    ("an invoice's parent a string",
     _with("data.object.parent", "sub_1", event("invoice.payment_failed", dict(INVOICE))),
     "data.object.parent"),
]


@pytest.mark.parametrize(("what", "sent", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_signed_event_it_cannot_read_is_refused_logged_and_not_stored(
        client, alice_pays, caplog, what, sent, field):
    body = sent if isinstance(sent, bytes) else json.dumps(sent).encode()
    before = Subscription.objects.values().get(pk=alice_pays.pk)
    with caplog.at_level(logging.WARNING, logger="billing.webhooks"):
        answer = post_signed(client, body)
    assert answer.status_code == 400, answer.content[:300]
    assert answer["Content-Type"] == "application/json"
    error = answer.json()["error"]
    assert error["code"] in ("malformed_event", "invalid_json")
    assert error["field"].startswith(field), error
    assert StripeEvent.objects.count() == 0
    assert Subscription.objects.values().get(pk=alice_pays.pk) == before
    refused = [r for r in caplog.records if r.name == "billing.webhooks"]
    assert len(refused) == 1 and refused[0].exc_info is None
    assert "refused" in refused[0].getMessage()


def test_a_body_that_is_not_utf8_is_refused_before_anything_else(client, stripe_settings):
    answer = client.post(WEBHOOK_PATH, data=b'{"id": "\xff"}', content_type="application/json",
                         HTTP_STRIPE_SIGNATURE=f"t={NOW},v1=00")
    assert answer.status_code == 400 and answer.json()["error"]["field"] == "body"
    assert StripeEvent.objects.count() == 0


def test_a_body_over_the_limit_is_refused_in_json_unread(client, stripe_settings, settings):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    for signed in (False, True):
        body = b'{"id": "evt_1", "pad": "' + b"a" * limit + b'"}'
        answer = (post_signed(client, body) if signed else
                  client.post(WEBHOOK_PATH, data=body, content_type="application/json"))
        assert answer.status_code == 413
        assert answer["Content-Type"] == "application/json"
        assert answer.json()["error"] == {
            "code": "payload_too_large", "field": "body",
            "message": f"the body is larger than {limit} bytes, more than any Stripe event",
            "fix": "send Stripe's event unchanged"}
    assert StripeEvent.objects.count() == 0


@pytest.mark.parametrize("offset", [-TOLERANCE - 5, TOLERANCE + 5, 10**9])
def test_a_signature_made_outside_the_tolerance_either_way_is_refused(
        client, alice_pays, caplog, offset):
    sent = event("customer.subscription.updated", _subscription(status="canceled"), created=NOW)
    with caplog.at_level(logging.WARNING, logger="billing.webhooks"):
        answer = signed_post(client, sent, at=int(time.time()) + offset)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "bad_signature" and error["field"] == "Stripe-Signature"
    assert ("ahead of" if offset > 0 else "behind") in error["message"]
    assert "NTP" in error["fix"]
    assert StripeEvent.objects.count() == 0
    assert Subscription.objects.get(pk=alice_pays.pk).status == "active"
    assert [r.exc_info for r in caplog.records if r.name == "billing.webhooks"] == [None]


@pytest.mark.parametrize("offset", [-TOLERANCE + 30, TOLERANCE - 30])
def test_a_signature_within_the_tolerance_either_way_is_accepted(client, alice_pays, offset):
    sent = event("customer.subscription.updated", _subscription(), created=NOW)
    answer = signed_post(client, sent, at=int(time.time()) + offset)
    assert answer.status_code == 200 and answer.json()["outcome"] == "plan pro (active)"


def test_the_tolerance_is_stripes_default_and_checked_by_its_sdk_first(client, stripe_settings):
    assert webhooks.TOLERANCE_SECONDS == TOLERANCE == 300
    # A header whose time is fine but whose signature is not: refused as a bad signature.
    body = json.dumps(event("invoice.paid", INVOICE)).encode()
    answer = client.post(WEBHOOK_PATH, data=body, content_type="application/json",
                         HTTP_STRIPE_SIGNATURE=f"t={int(time.time())},v1={'0' * 64}")
    assert answer.status_code == 400
    assert "does not match" in answer.json()["error"]["message"]


def test_other_methods_are_refused_in_json(client, stripe_settings):
    for method in ("get", "put", "delete"):
        answer = getattr(client, method)(WEBHOOK_PATH)
        assert answer.status_code == 405 and answer["Allow"] == "POST"
        assert answer.json()["error"]["field"] == "method"


def test_a_well_formed_event_with_fields_stripe_added_later_is_read(client, alice_pays):
    sent = event("customer.subscription.updated",
                 _subscription(brand_new_field={"nested": [1, 2]}, status="past_due"),
                 created=NOW)
    sent["brand_new_top_level"] = True
    answer = signed_post(client, sent)
    assert answer.status_code == 200 and answer.json()["outcome"] == "plan pro (past_due)"
    assert StripeEvent.objects.get(pk=sent["id"]).payload == sent
