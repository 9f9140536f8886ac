"""The stubbed Checkout the browser walk uses, end to end over HTTP without a browser:
checkout_url -> the stub's page -> Pay -> localstripe subscribes -> webhooks -> Pro."""

import httpx
import pytest

from billing.ledger import allowance
from billing.models import Plan, StripeEvent, Subscription
from billing.payments import checkout_url, portal_url
from billing.plans import seed_plans
from tests.billing.conftest import WEBHOOK_PATH, WEBHOOK_SECRET, wait_for
from tests.billing.stripe_stub import StripeStub


@pytest.fixture
def stub(stripe_webhooks, localstripe, stripe_settings):
    server = StripeStub(localstripe_url=localstripe.url,
                        webhook_url=stripe_webhooks.url + WEBHOOK_PATH,
                        webhook_secret=WEBHOOK_SECRET).start()
    stripe_settings.STRIPE_API_BASE = server.url
    yield server
    server.stop()


def test_paying_on_the_stubbed_checkout_page_makes_the_account_pro(stub, alice):
    seed_plans()  # the live server's tests flush the database, seeded rows too
    pro_plan = Plan.objects.get(slug="pro")
    pro_plan.stripe_price_id = stub.create_price(name="Pro", amount_cents=2900)
    pro_plan.save()
    url = checkout_url(account=alice.account, plan=pro_plan, email="alice@example.com",
                       success_url="http://echo.test/billing?paid=1",
                       cancel_url="http://echo.test/billing")

    page = httpx.get(url)
    assert page.status_code == 200 and ">Pay</button>" in page.text
    paid = httpx.post(url + "/pay")

    assert paid.status_code == 303
    assert paid.headers["location"] == "http://echo.test/billing?paid=1"
    # checkout.session.completed was delivered (and handled) before the redirect.
    completed = StripeEvent.objects.get(type="checkout.session.completed")
    assert completed.outcome == "plan pro (active)"
    assert allowance(alice.account.id).allowed == pro_plan.monthly_units
    row = Subscription.objects.get(account=alice.account)
    assert row.stripe_subscription_id == stub.sessions[url.rsplit("/", 1)[1]]["subscription"]
    # localstripe's own signed event arrives too, and agrees.
    wait_for("localstripe's customer.subscription.created", lambda: StripeEvent.objects.filter(
        type="customer.subscription.created", payload__data__object__id=row.stripe_subscription_id,
        handled_at__isnull=False).exists())
    assert allowance(alice.account.id).allowed == pro_plan.monthly_units

    portal = httpx.get(portal_url(account=alice.account, return_url="http://echo.test/billing"))
    assert portal.status_code == 200 and 'href="http://echo.test/billing"' in portal.text
