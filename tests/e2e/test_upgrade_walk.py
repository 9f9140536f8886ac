"""From a refused write to a bigger plan: a Free account's agent runs out of units and
reads why, its owner follows the banner to the billing page, upgrades through the
(stubbed) Stripe Checkout, the webhook lands, and the agent's same call now succeeds."""

from __future__ import annotations

import httpx
import pytest

from billing.models import Plan
from billing.plans import seed_plans
from tests.billing.conftest import (  # noqa: F401 (fixtures)
    WEBHOOK_PATH,
    WEBHOOK_SECRET,
    localstripe,
    stripe_settings,
)
from tests.billing.stripe_stub import StripeStub
from tests.factories import signed_up
from web import billing as billing_pages


class Agent:
    """An MCP client over HTTP, as the integration guide's clients are: one session."""

    def __init__(self, base: str, key: str):
        self.http = httpx.Client(base_url=base, timeout=30, headers={
            "Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"})
        reply = self.http.post("/mcp", json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "walk", "version": "1"}}})
        self.http.headers["Mcp-Session-Id"] = reply.headers["Mcp-Session-Id"]
        self.http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, name: str, arguments: dict) -> dict:
        reply = self.http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": name, "arguments": arguments}})
        assert reply.status_code == 200, reply.text
        return reply.json()["result"]


EPISODE = {"scope": "shared", "assume_new": True,
           "entities": [{"name": "checkout-service", "type": "service"},
                        {"name": "Postgres 16", "type": "database"},
                        {"name": "Dana", "type": "person"}],
           "facts": [{"source": "checkout-service", "target": "Postgres 16",
                      "relation_type": "stores_orders_in", "confidence": "extracted",
                      "fact": "checkout-service stores its orders in Postgres 16"},
                     {"source": "Dana", "target": "checkout-service", "relation_type": "owns",
                      "confidence": "extracted", "fact": "Dana owns checkout-service"}]}


@pytest.fixture
def stripe(stripe_settings, localstripe, live_server, transactional_db, monkeypatch):  # noqa: F811
    stub = StripeStub(localstripe_url=localstripe.url,
                      webhook_url=live_server.url + WEBHOOK_PATH,
                      webhook_secret=WEBHOOK_SECRET).start()
    stripe_settings.STRIPE_API_BASE = stub.url
    # Our page may end a form POST on Stripe's Checkout: here that page is the stub's.
    monkeypatch.setattr(billing_pages, "STRIPE_PAGES", [stub.url])
    yield stub
    stub.stop()


def test_a_free_account_out_of_units_upgrades_and_the_agent_goes_on(
        live_server, page, visits, stripe):
    seed_plans()
    Plan.objects.filter(slug="free").update(monthly_units=3)
    Plan.objects.filter(slug="pro").update(
        stripe_price_id=stripe.create_price(name="Pro", amount_cents=2900))
    agent = Agent(live_server.url, signed_up("dana@example.com").plaintext)

    first = agent.call("write_episode", EPISODE)
    assert first["isError"] is False and first["units"] == 2
    more = {**EPISODE, "facts": [{**fact, "fact": fact["fact"] + " since March"}
                                 for fact in EPISODE["facts"]]}  # supersedes both: 2 units
    refused = agent.call("write_episode", more)
    assert refused["isError"] is True
    text = refused["content"][0]["text"]
    assert "2 of 3 units used on the Free plan" in text
    assert "this write needs 2 units and 1 remains; nothing was stored" in text
    assert f"Upgrade at {live_server.url}/billing" in text
    usage = agent.call("get_usage", {})
    assert (usage["plan"], usage["remaining"]) == ("free", 1)

    visits.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill("dana@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    assert "used 66% of this month's units" not in page.content()  # below 80%: no banner
    visits.click("link", "Billing")
    visits.click("button", "Upgrade to Pro")
    assert page.url.startswith(stripe.url + "/checkout/")
    visits.click("button", "Pay")
    # Stripe's address back names the session, which the page could ask Stripe about.
    assert page.url.startswith(f"{live_server.url}/billing?checkout=success&session_id=cs_")
    assert "Thank you: this account is on the Pro plan." in page.content()
    current = page.get_by_role("region", name="Current plan")
    assert "Pro" in current.inner_text()  # the webhook landed before the redirect

    again = agent.call("write_episode", more)
    assert again["isError"] is False and again["stored"] is True and again["units"] == 2
    usage = agent.call("get_usage", {})
    assert (usage["plan"], usage["used"], usage["allowed"]) == ("pro", 4, 1_000_000)
    visits.goto(f"{live_server.url}/billing")
    assert "4 of 1,000,000" in page.get_by_role("region", name="Units this month").inner_text()
