"""The billing page in Chromium, with a month of real usage: an owner near the end of the
Free plan's units follows the banner to the page and sees the plan, the progress bar, both
charts (and their tables), usage per memory and per key, and the plans to choose from,
on a wide screen and a phone without sideways scrolling."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accounts.services import api_key_create
from billing.plans import month_of
from memories.graph.services import memory_create
from tests.billing.usage_rows import charge, plan, record, sell
from tests.factories import Actor, signed_up

# Busy weekdays, quiet weekends: a month that looks like a team's.
DAY_UNITS = [260, 410, 380, 520, 470, 90, 40]
MONTH_UNITS = [0, 0, 120, 1_400, 2_300, 3_100, 2_800, 4_200, 5_600, 6_100, 7_400]


def _history(owner: Actor, colleague: Actor) -> None:
    memory_create(account_id=owner.account.pk, name="support-tickets")
    memory_create(account_id=owner.account.pk, name="design-notes")
    now = datetime.now(UTC)
    month = month_of(now)
    for day in range((now.date() - month).days):  # the earlier days of this month
        at = datetime.combine(month + timedelta(days=day), datetime.min.time(),
                              tzinfo=UTC) + timedelta(hours=14)
        units = DAY_UNITS[at.weekday()]
        record(owner, units * 2 // 3, at, memory="default", tool="query_memory")
        record(colleague, units // 3, at, memory="support-tickets", tool="write_episode")
    charge(owner, 310, memory="design-notes")
    charge(colleague, 120, memory="support-tickets", tool="query_memory")
    for back, units in enumerate(reversed(MONTH_UNITS), start=1):
        index = month.year * 12 + month.month - 1 - back
        if units:
            record(owner, units, datetime(index // 12, index % 12 + 1, 12, tzinfo=UTC))


@pytest.mark.django_db(transaction=True)
def test_an_owner_reads_the_months_usage_and_the_plans(live_server, page, visits, settings):
    settings.STRIPE_SECRET_KEY = "sk_test_e2e"  # Stripe itself is not called on this page
    sell("pro", "price_pro_e2e")
    owner = signed_up("ada@example.com")
    bot, bot_plaintext = api_key_create(account=owner.account, holder=owner.user,
                                        name="support bot", tool="support-bot")
    colleague = Actor(owner.user, owner.account, bot, bot_plaintext)
    _history(owner, colleague)
    free = plan("free").monthly_units
    record(owner, free * 85 // 100 - _used(owner.account), datetime.now(UTC), memory="default")

    visits.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")
    banner = page.get_by_role("alert")
    assert "used 85% of this month's units" in banner.inner_text()
    visits.click("link", "See usage and plans")
    assert page.url.endswith("/billing")

    month = page.get_by_role("region", name="Units this month")
    assert "8,500" in month.inner_text() and "of 10,000 units used (85%)" in month.inner_text()
    bar = page.get_by_role("progressbar", name="Units used this month")
    assert bar.get_attribute("aria-valuenow") == "85"
    width = page.evaluate("() => { const bar = document.querySelector('.usage-progress "
                          ".progress-bar'); return bar.getBoundingClientRect().width / "
                          "bar.parentElement.getBoundingClientRect().width; }")
    assert 0.84 < width < 0.86  # the class really sets the width (no style= under the CSP)
    daily = page.get_by_role("img", name="Units per day")
    monthly = page.get_by_role("img", name="Units per month")
    assert daily.is_visible() and monthly.is_visible()
    assert daily.locator("rect.bar").count() >= 1
    assert monthly.locator("rect.bar").count() == 1 + sum(1 for u in MONTH_UNITS if u)
    assert page.get_by_role("region", name="By memory this month").get_by_text(
        "support-tickets").is_visible()
    keys = page.get_by_role("region", name="By API key this month")
    assert keys.get_by_text("support bot").is_visible()
    assert keys.get_by_text(f"em_{bot.prefix}_…").is_visible()
    plans = page.get_by_role("region", name="Plans")
    assert plans.get_by_role("button", name="Upgrade to Pro").is_enabled()
    assert plans.get_by_role("button", name="Upgrade to Team").is_disabled()
    assert plans.get_by_text("Not for sale on this server.").is_visible()
    assert _fits(page)
    page.screenshot(path=str(visits.folder / "billing-wide.png"), full_page=True)

    page.get_by_text("Show as a table").last.click()
    table = page.get_by_role("table", name="Units per month")
    assert table.get_by_role("row").count() == 13  # a header and twelve months

    page.set_viewport_size({"width": 390, "height": 844})
    visits.goto(f"{live_server.url}/billing")
    assert _fits(page)
    assert page.get_by_role("img", name="Units per month").bounding_box()["width"] >= 440


def _used(account) -> int:
    from billing.usage import standing
    return standing(account.pk).used


def _fits(page) -> bool:
    """Nothing makes the page scroll sideways: the nav wraps, and a chart too wide for a
    phone scrolls inside its own card."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
