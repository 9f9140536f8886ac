"""Checkout and the portal at the HTTP boundary: the exact requests our code sends.

localstripe has no Checkout or portal, so a recording stub answers those and forwards the
rest (the customer) to localstripe.
"""

import pytest

from billing.models import Plan, Subscription
from billing.payments import (
    BillingNotConfigured,
    StripeUnavailable,
    checkout_url,
    portal_url,
)
from billing.stripe_api import STRIPE_API_VERSION
from echomem.errors import EchoError


def test_checkout_creates_the_customer_once_and_asks_for_a_subscription_session(
        stub, pro_plan, alice, stripe_settings):
    url = checkout_url(account=alice.account, plan=pro_plan, email="alice@example.com",
                       success_url="https://echo.test/billing?paid=1",
                       cancel_url="https://echo.test/billing")

    [customer_request] = stub.requests_to("POST", "/v1/customers")
    assert customer_request.form == {"email": "alice@example.com", "name": alice.account.name,
                                      "metadata[account_id]": str(alice.account.pk)}
    subscription = Subscription.objects.get(account=alice.account)
    assert subscription.stripe_customer_id.startswith("cus_")
    assert subscription.plan.is_default and subscription.status == "active"

    [session_request] = stub.requests_to("POST", "/v1/checkout/sessions")
    assert session_request.form == {
        "mode": "subscription",
        "customer": subscription.stripe_customer_id,
        "line_items[0][price]": pro_plan.stripe_price_id,
        "line_items[0][quantity]": "1",
        "client_reference_id": str(alice.account.pk),
        "metadata[account_id]": str(alice.account.pk),
        "subscription_data[metadata][account_id]": str(alice.account.pk),
        "success_url": "https://echo.test/billing?paid=1",
        "cancel_url": "https://echo.test/billing",
    }
    for request in (customer_request, session_request):
        assert request.stripe_version == STRIPE_API_VERSION
        assert request.authorization == f"Bearer {stripe_settings.STRIPE_SECRET_KEY}"
    [session_id] = stub.sessions
    assert url == f"{stub.url}/checkout/{session_id}"

    # A second upgrade click reuses the customer.
    checkout_url(account=alice.account, plan=pro_plan, email="alice@example.com",
                 success_url="https://echo.test/ok", cancel_url="https://echo.test/no")
    assert len(stub.requests_to("POST", "/v1/customers")) == 1
    assert len(stub.requests_to("POST", "/v1/checkout/sessions")) == 2


def test_an_account_that_already_pays_switches_in_the_portal_not_a_second_checkout(
        stub, pro_plan, alice):
    Subscription.objects.create(account=alice.account, plan=pro_plan,
                                status=Subscription.Status.ACTIVE, stripe_customer_id="cus_x",
                                stripe_subscription_id="sub_x")
    team = Plan.objects.get(slug="team")
    team.stripe_price_id = "price_team_x"
    team.save()
    with pytest.raises(EchoError) as refused:
        checkout_url(account=alice.account, plan=team, email="a@example.com",
                     success_url="https://echo.test/a", cancel_url="https://echo.test/b")
    assert refused.value.field == "plan" and "second subscription" in refused.value.message
    assert "Manage billing" in refused.value.fix
    assert stub.requests_to("POST", "/v1/checkout/sessions") == []
    assert stub.requests_to("POST", "/v1/customers") == []


def test_a_plan_without_a_stripe_price_is_refused_before_stripe_is_asked(stub, alice):
    free = Plan.objects.get(slug="free")
    with pytest.raises(EchoError) as refused:
        checkout_url(account=alice.account, plan=free, email="a@example.com",
                     success_url="https://echo.test/a", cancel_url="https://echo.test/b")
    assert refused.value.field == "plan"
    assert "not for sale" in refused.value.message and "billing_plans" in refused.value.fix
    assert stub.requests == []


def test_the_portal_opens_for_the_accounts_customer(stub, pro_plan, alice, stripe_settings):
    checkout_url(account=alice.account, plan=pro_plan, email="alice@example.com",
                 success_url="https://echo.test/a", cancel_url="https://echo.test/b")
    customer = Subscription.objects.get(account=alice.account).stripe_customer_id

    url = portal_url(account=alice.account, return_url="https://echo.test/billing")

    [request] = stub.requests_to("POST", "/v1/billing_portal/sessions")
    assert request.form == {"customer": customer, "return_url": "https://echo.test/billing"}
    assert request.stripe_version == STRIPE_API_VERSION
    assert request.authorization == f"Bearer {stripe_settings.STRIPE_SECRET_KEY}"
    assert url.startswith(f"{stub.url}/portal/bps_")


def test_the_portal_of_an_account_that_never_paid_says_so(stub, charlie):
    with pytest.raises(EchoError) as refused:
        portal_url(account=charlie.account, return_url="https://echo.test/billing")
    assert refused.value.field == "account" and "never paid" in refused.value.message
    assert stub.requests == []


def test_without_keys_both_say_billing_is_not_configured(settings, pro_plan_row, alice):
    settings.STRIPE_SECRET_KEY = ""
    with pytest.raises(BillingNotConfigured):
        checkout_url(account=alice.account, plan=pro_plan_row, email="a@example.com",
                     success_url="https://echo.test/a", cancel_url="https://echo.test/b")
    with pytest.raises(BillingNotConfigured):
        portal_url(account=alice.account, return_url="https://echo.test/billing")


def test_stripe_out_of_reach_is_a_clear_error_and_stores_no_customer(
        stripe_settings, pro_plan_row, alice):
    stripe_settings.STRIPE_API_BASE = "http://127.0.0.1:9"
    with pytest.raises(StripeUnavailable) as failed:
        checkout_url(account=alice.account, plan=pro_plan_row, email="a@example.com",
                     success_url="https://echo.test/a", cancel_url="https://echo.test/b")
    assert "Stripe did not accept the request" in failed.value.message
    assert not Subscription.objects.filter(account=alice.account).exclude(
        stripe_customer_id="").exists()


@pytest.fixture
def pro_plan_row(db) -> Plan:
    plan = Plan.objects.get(slug="pro")
    plan.stripe_price_id = "price_pro_unreached"
    plan.save()
    return plan
