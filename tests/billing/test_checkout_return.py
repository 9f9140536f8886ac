"""The page Checkout returns to believes Stripe, not its own address: alice buys Pro on the
stubbed Checkout (localstripe behind it) and comes back before any webhook has landed;
the page says the payment went through only because Stripe's session says so. A forged
address, another account's session, an unpaid one and ids that cannot be a session's
say no such thing, and the last are never sent to Stripe."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest

from billing.models import Plan
from billing.payments import checkout_url
from billing.plans import seed_plans

PAID = "Thank you: Stripe confirms the payment."
NOT_CONFIRMED = "Stripe has not confirmed a payment for this account, which is on the Free plan."



@pytest.fixture
def pro(stub, db) -> Plan:
    seed_plans()
    plan = Plan.objects.get(slug="pro")
    plan.stripe_price_id = stub.create_price(name="Pro", amount_cents=2900)
    plan.save()
    return plan


def _text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def _session_of(account, plan) -> str:
    url = checkout_url(account=account, plan=plan, email="x@example.com",
                       success_url="http://testserver/billing?checkout=success"
                                   "&session_id={CHECKOUT_SESSION_ID}",
                       cancel_url="http://testserver/billing?checkout=cancel")
    return url.rsplit("/", 1)[1]


def test_a_paid_checkout_is_confirmed_from_stripes_session_not_the_address(
        client, alice, pro, stub):
    client.force_login(alice.user)
    to_checkout = client.post("/billing/checkout/", {"plan": "pro"})
    assert to_checkout.status_code == 302
    session_id = to_checkout["Location"].rsplit("/", 1)[1]

    paid = httpx.post(to_checkout["Location"] + "/pay")
    back = urlsplit(paid.headers["location"])
    assert back.query == f"checkout=success&session_id={session_id}"

    page = _text(client.get(f"{back.path}?{back.query}"))
    assert PAID in page and "Current plan Free" in page  # no webhook has landed yet
    assert stub.requests_to("GET", f"/v1/checkout/sessions/{session_id}")


def test_an_unpaid_session_says_nothing_was_charged(client, alice, pro, stub):
    session_id = _session_of(alice.account, pro)
    client.force_login(alice.user)
    page = _text(client.get("/billing", {"checkout": "success", "session_id": session_id}))
    assert PAID not in page
    assert "Checkout was not completed: nothing was charged, and this account is on the " \
           "Free plan." in page


def test_another_accounts_paid_session_confirms_nothing(client, alice, charlie, pro, stub):
    session_id = _session_of(charlie.account, pro)
    httpx.post(f"{stub.url}/checkout/{session_id}/pay")
    client.force_login(alice.user)
    page = _text(client.get("/billing", {"checkout": "success", "session_id": session_id}))
    assert PAID not in page and NOT_CONFIRMED in page


@pytest.mark.parametrize("forged", ["", "cs_1\x00", "cs_" + "a" * 10_000, "cs_1/../v1/customers",
                                    "cus_1", "cs_does_not_exist"])
def test_a_forged_return_says_only_what_the_database_says(client, alice, pro, stub, forged):
    client.force_login(alice.user)
    page = _text(client.get("/billing", {"checkout": "success", "session_id": forged}))
    assert PAID not in page and NOT_CONFIRMED in page
    asked = [r.path for r in stub.requests if r.path.startswith("/v1/checkout/sessions/")]
    assert asked == ([f"/v1/checkout/sessions/{forged}"] if forged == "cs_does_not_exist"
                     else [])


def test_an_unreachable_stripe_confirms_nothing_and_the_page_still_answers(
        client, alice, pro, stub, stripe_settings):
    session_id = _session_of(alice.account, pro)
    httpx.post(f"{stub.url}/checkout/{session_id}/pay")
    stripe_settings.STRIPE_API_BASE = "http://127.0.0.1:9"
    client.force_login(alice.user)
    answer = client.get("/billing", {"checkout": "success", "session_id": session_id})
    assert answer.status_code == 200 and NOT_CONFIRMED in _text(answer)
