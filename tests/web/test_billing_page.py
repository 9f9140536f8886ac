"""The billing page: alice (owner) sees her account's plan, units and where they went and
may buy or manage; bob (member) sees the same figures but the buttons are disabled and
the POSTs refuse him; charlie's usage never shows. A self-hosted box has no such page.
The usage banner appears on every signed-in page at 80% and at 100% of the month."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Membership
from billing import payments
from billing.models import Subscription, UsagePeriod
from billing.plans import month_of
from billing.usage import Amount
from memories.graph.services import memory_create
from tests.billing.usage_rows import charge, plan, record, sell
from web.billing import OWNER_ONLY
from web.usage_chart import daily_chart

NOT_CONFIGURED = "Billing is not configured on this server"


@pytest.fixture
def stripe_configured(settings):
    settings.STRIPE_SECRET_KEY = "sk_test_billing_page"
    sell("pro", "price_pro_test")


@pytest.fixture
def stripe_missing(settings):
    settings.STRIPE_SECRET_KEY = ""
    sell("pro", "price_pro_test")


def _text(response) -> str:
    """The page's visible words, tags dropped and spaces folded, for phrase checks."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def _month_before(month):
    return datetime(month.year - (month.month == 1), (month.month - 2) % 12 + 1, 3,
                    tzinfo=UTC)


def test_the_page_shows_the_plan_the_months_units_and_where_they_went(client, alice, bob,
                                                                     charlie):
    memory_create(account_id=alice.account.pk, name="notes")
    memory_create(account_id=charlie.account.pk, name="charlies-ledger")
    charge(alice, 1_230)
    charge(bob, 4, memory="notes", tool="query_memory")
    charge(charlie, 77, memory="charlies-ledger")
    record(alice, 500, _month_before(month_of()))
    client.force_login(alice.user)
    response = client.get("/billing")
    assert response.status_code == 200
    text = _text(response)
    assert "Current plan Free" in text
    assert "1,234 of 10,000 units used (12%)" in text
    assert "8,766 units remain" in text
    assert 'aria-valuenow="12"' in response.content.decode()
    assert "usage-w-12" in response.content.decode()
    report = response.context["report"]
    assert [(s.name, s.units) for s in report.by_memory] == [("default", 1_230), ("notes", 4)]
    assert [(s.name, s.units) for s in report.by_key] == [("laptop", 1_230), ("bot", 4)]
    assert f"em_{alice.key.prefix}_… · claude-code" in text and "notes" in text
    # Charlie's account is another tenant: none of its names or keys appear.
    assert "charlies-ledger" not in text and charlie.key.prefix not in text


def test_one_unit_is_one_unit_on_the_page_and_in_the_charts(client, alice):
    charge(alice, 9_999)  # the Free plan's 10,000 less one
    client.force_login(alice.user)
    response = client.get("/billing")
    text = _text(response)
    assert "1 unit remains." in text and "1 units" not in text
    charge(alice, 1)
    text = _text(client.get("/billing"))
    assert "0 units remain." in text
    one = daily_chart([Amount(start=month_of(), units=1)], month_of())
    assert one.description.startswith("1 unit in ") and one.bars[0].tooltip.endswith(": 1 unit")


def test_both_charts_have_axes_titles_and_a_table_for_screen_readers(client, alice):
    charge(alice, 40)
    record(alice, 2_500, _month_before(month_of()))
    client.force_login(alice.user)
    response = client.get("/billing")
    html = response.content.decode()
    assert html.count('role="img"') == 2
    daily, monthly = response.context["daily"], response.context["monthly"]
    assert daily.title.startswith("Units per day") and monthly.title.startswith("Units per month")
    assert daily.rows[-1][1] == 40 and sum(units for _, units in daily.rows) == 40
    assert len(monthly.rows) == 12 and [u for _, u in monthly.rows][-2:] == [2_500, 40]
    assert [t.label for t in monthly.ticks] == ["0", "1k", "2k", "3k"]
    assert "2,540 units in the last 12 months" in monthly.description
    assert f"<desc id=\"monthly-chart-desc\">{monthly.description}</desc>" in html
    assert "Show as a table" in html and "<td class=\"text-end\">2,500</td>" in html


def test_the_owner_may_buy_a_plan_with_a_stripe_price_and_is_sent_to_checkout(
        client, alice, stripe_configured, monkeypatch):
    asked = {}

    def checkout_url(**arguments):
        asked.update(arguments)
        return "https://checkout.stripe.com/c/pay/cs_test_page"

    monkeypatch.setattr(payments, "checkout_url", checkout_url)
    alice.user.email = "alice@example.com"
    alice.user.save()
    client.force_login(alice.user)
    page = client.get("/billing")
    html = page.content.decode()
    assert 'name="plan" value="pro"' in html and "Upgrade to Pro" in html
    # The Team plan has no Stripe price here: shown, not for sale.
    assert 'name="plan" value="team"' not in html and "Not for sale on this server." in html
    assert "https://checkout.stripe.com" in page["Content-Security-Policy"]

    response = client.post("/billing/checkout/", {"plan": "pro"})
    assert response.status_code == 302
    assert response["Location"] == "https://checkout.stripe.com/c/pay/cs_test_page"
    assert asked["account"] == alice.account and asked["plan"].slug == "pro"
    assert asked["email"] == "alice@example.com"
    # Stripe puts the session's id in the address; the page asks Stripe about it.
    assert asked["success_url"] == ("http://testserver/billing?checkout=success"
                                    "&session_id={CHECKOUT_SESSION_ID}")
    assert asked["cancel_url"] == "http://testserver/billing?checkout=cancel"


def test_a_plan_without_a_price_or_unknown_is_refused_with_a_message(client, alice,
                                                                     stripe_configured):
    client.force_login(alice.user)
    refused = client.post("/billing/checkout/", {"plan": "team"}, follow=True)
    assert "The Team plan cannot be bought here" in _text(refused)
    unknown = client.post("/billing/checkout/", {"plan": "platinum"}, follow=True)
    assert "named no plan this server sells" in _text(unknown)


def test_without_stripe_the_page_says_billing_is_not_configured(client, alice,
                                                                stripe_missing):
    client.force_login(alice.user)
    page = _text(client.get("/billing"))
    assert f"{NOT_CONFIGURED}." in page
    assert "Upgrade to Pro" in page  # shown, disabled, with the reason
    bought = client.post("/billing/checkout/", {"plan": "pro"}, follow=True)
    assert bought.redirect_chain == [("/billing", 302)]
    assert f"{NOT_CONFIGURED}, so plans cannot be bought or managed here yet." in _text(bought)
    managed = client.post("/billing/portal/", follow=True)
    assert f"{NOT_CONFIGURED}, so plans cannot be bought or managed here yet." in _text(managed)


def test_manage_billing_needs_a_stripe_customer_first(client, alice, stripe_configured,
                                                      monkeypatch):
    monkeypatch.setattr(payments, "portal_url",
                        lambda **kw: f"https://billing.stripe.com/p/session/{kw['return_url']}")
    client.force_login(alice.user)
    assert "no billing details or invoices yet" in _text(client.get("/billing"))
    none_yet = client.post("/billing/portal/", follow=True)
    assert "There are no billing details or invoices yet" in _text(none_yet)

    Subscription.objects.create(account=alice.account, plan=plan("pro"),
                                stripe_customer_id="cus_alice")
    assert "Manage billing and invoices" in client.get("/billing").content.decode()
    portal = client.post("/billing/portal/")
    assert portal.status_code == 302
    assert portal["Location"] == ("https://billing.stripe.com/p/session/"
                                  "http://testserver/billing")


@pytest.mark.parametrize("role", [Membership.Role.MEMBER, Membership.Role.ADMIN])
def test_members_and_admins_see_usage_but_cannot_buy_or_manage(client, alice, bob, role,
                                                               stripe_configured):
    Membership.objects.filter(user=bob.user).update(role=role)
    Subscription.objects.create(account=alice.account, plan=plan("pro"),
                                stripe_customer_id="cus_alice")
    charge(alice, 9)
    client.force_login(bob.user)
    page = client.get("/billing")
    assert page.status_code == 200
    text, html = _text(page), page.content.decode()
    assert "9 of 1,000,000 units used" in text and "Current plan Pro" in text
    assert OWNER_ONLY in text
    assert 'name="plan"' not in html and 'action="/billing/portal/"' not in html
    assert client.post("/billing/checkout/", {"plan": "pro"}).status_code == 403
    assert client.post("/billing/portal/").status_code == 403


def test_the_address_alone_never_says_a_payment_went_through(client, alice):
    """Anyone can type ?checkout=success: the page names the database's plan and claims
    a payment only when Stripe confirms it (tests/billing/test_checkout_return.py)."""
    client.force_login(alice.user)
    for forged in ({"checkout": "success"},
                   {"checkout": "success", "session_id": "cs_test_forged"},
                   {"checkout": "success", "session_id": "cs_1\x00"}):
        text = _text(client.get("/billing", forged))
        assert "Thank you" not in text and "payment went through" not in text
        assert "Stripe has not confirmed a payment for this account, which is on the Free " \
               "plan." in text
    cancel = _text(client.get("/billing", {"checkout": "cancel"}))
    assert "Checkout was cancelled. This account is on the Free plan." in cancel
    assert client.get("/billing", {"checkout": "bogus"}).context["checkout"] is None


def test_after_checkout_the_plan_named_is_the_databases(client, alice):
    Subscription.objects.create(account=alice.account, plan=plan("pro"),
                                stripe_customer_id="cus_alice")
    client.force_login(alice.user)
    text = _text(client.get("/billing", {"checkout": "success"}))
    assert "Thank you: this account is on the Pro plan." in text


@pytest.mark.parametrize("sent", ["pro\x00", "a" * 10_000, "pr o", "", "platinum"])
def test_a_plan_the_server_does_not_sell_is_a_400_page_saying_so(client, alice,
                                                                 stripe_configured, sent):
    client.force_login(alice.user)
    refused = client.post("/billing/checkout/", {"plan": sent})
    assert refused.status_code == 400 and "html" in refused["Content-Type"]
    assert "Pick a plan from the list below: the form named no plan this server sells." in \
        _text(refused)
    assert not Subscription.objects.filter(account=alice.account).exists()


def test_the_old_address_with_a_slash_leads_to_the_page(client, alice):
    client.force_login(alice.user)
    moved = client.get("/billing/", {"checkout": "cancel"})
    assert moved.status_code == 302 and moved["Location"] == "/billing?checkout=cancel"


def test_a_self_hosted_box_has_no_billing_page_and_no_link(client, alice, settings):
    settings.SELF_HOSTED = True
    client.force_login(alice.user)
    assert client.get("/billing").status_code == 404
    assert client.post("/billing/checkout/", {"plan": "pro"}).status_code == 404
    assert client.post("/billing/portal/").status_code == 404
    assert 'href="/billing"' not in client.get("/dashboard/").content.decode()


def test_the_nav_links_to_billing_on_the_hosted_service(client, alice):
    client.force_login(alice.user)
    assert '<a class="nav-link" href="/billing">Billing</a>' in (
        client.get("/dashboard/").content.decode())


def test_signed_out_visitors_are_sent_to_sign_in(client, db):
    response = client.get("/billing")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def _use(account, units: int) -> None:
    UsagePeriod.objects.update_or_create(account=account, month=month_of(),
                                         defaults={"units": units})


def test_the_banner_warns_at_80_percent_on_every_signed_in_page(client, alice, bob):
    client.force_login(bob.user)
    _use(alice.account, 7_999)
    assert "of this month's units" not in _text(client.get("/dashboard/"))
    _use(alice.account, 8_000)
    for path in ("/dashboard/", "/team/", "/audit/", "/memories/default/"):
        response = client.get(path)
        text = _text(response)
        assert "This account has used 80% of this month's units (8,000 of 10,000 on the " \
               "Free plan)" in text, path
        assert 'href="/billing">See usage and plans</a>' in response.content.decode(), path


def test_the_banner_says_plainly_when_the_units_are_gone(client, alice):
    _use(alice.account, 10_000)
    client.force_login(alice.user)
    text = _text(client.get("/dashboard/"))
    assert "This account has used all of this month's units (10,000 of 10,000" in text
    assert "writes are refused and recalls return nothing" in text
    billing = client.get("/billing")
    assert "This account has used all of this month's units" in _text(billing)
    assert "See usage and plans" not in _text(billing)  # not a link to the page it is on


def test_the_banner_is_per_account_and_absent_when_self_hosted(client, alice, charlie,
                                                               settings):
    _use(alice.account, 10_000)
    client.force_login(charlie.user)
    assert "of this month's units" not in _text(client.get("/dashboard/"))
    settings.SELF_HOSTED = True
    client.force_login(alice.user)
    assert "of this month's units" not in _text(client.get("/dashboard/"))


def test_the_banner_costs_one_query_and_none_when_self_hosted(client, alice, settings):
    client.force_login(alice.user)

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/team/").status_code == 200
        return len(queries)

    hosted = count()
    settings.SELF_HOSTED = True
    assert count() == hosted - 1
