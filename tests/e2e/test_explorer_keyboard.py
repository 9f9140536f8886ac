"""The explorer and the cause view by keyboard alone: Tab, typing and Enter reach the search,
a result's entity, the cause view's search-as-you-type, a suggestion, and a diagram box
whose full name shows when it has focus. One page, five loads."""

from __future__ import annotations

import pytest

from tests.e2e.test_every_page import blocking_violations
from tests.factories import Engine, fact, session_for, signed_up

LONG = "Disk full on the primary database server db-2"


def _tab_to(page, test: str, limit: int = 60) -> None:
    """Press Tab until the focused element passes `test` (a JS expression over `el`)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"(() => {{ const el = document.activeElement; return !!({test}); }})()"):
            return
    raise AssertionError(f"Tab never reached an element where {test}")


def _enter_loads(page, visits) -> None:
    with page.expect_navigation():
        page.keyboard.press("Enter")
    visits.shoot()


@pytest.mark.django_db(transaction=True)
def test_explorer_and_cause_view_by_keyboard_only(live_server, page, visits):
    ops = signed_up("keys@example.com")
    Engine(ops.principal).write(
        assume_new=True, entities=[{"name": LONG, "type": "event"},
                                   {"name": "Checkout outage", "type": "event"},
                                   {"name": "Refund wave", "type": "event"}],
        facts=[fact(LONG, "Checkout outage", "caused",
                    "The full disk on db-2 caused the checkout outage", causal_hint="led_to",
                    valid_at="2026-03-04T13:05:00Z"),
               fact("Checkout outage", "Refund wave", "caused",
                    "The checkout outage led to a wave of refunds", causal_hint="led_to")])
    page.context.add_cookies([{"name": "sessionid", "value": session_for(ops.user),
                               "url": live_server.url}])

    # A browser in Paris: timezone.js tells the server, which shows times there from the
    # next page on.
    page.context.new_cdp_session(page).send("Emulation.setTimezoneOverride",
                                            {"timezoneId": "Europe/Paris"})
    visits.goto(f"{live_server.url}/memories/default/")
    zone = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
    assert zone == "Europe/Paris" and "tz=Europe/Paris" in page.evaluate("document.cookie")
    _tab_to(page, "el.id === 'id_q'")
    page.keyboard.type("why did checkout go down")
    _enter_loads(page, visits)
    results = page.locator("[aria-labelledby=results-heading]")
    assert "The full disk on db-2 caused the checkout outage" in results.inner_text()
    # The browser's zone, named, from the cookie the first page set.
    assert f"Times in {zone} (your browser's)" in page.locator("#time-zone-note").inner_text()
    assert "True from 2026-03-04 14:05 CET" in results.inner_text()  # 13:05 UTC
    page.locator("form details").evaluate("d => { d.open = true; }")  # axe sees its fields
    axe = blocking_violations(page)

    _tab_to(page, f"el.closest('[aria-labelledby=results-heading]') && el.textContent === {LONG!r}")
    _enter_loads(page, visits)
    assert page.get_by_role("heading", level=1).inner_text().startswith(LONG)
    assert page.locator(".timeline").is_visible()
    axe += blocking_violations(page)

    _tab_to(page, "el.textContent.trim() === 'Cause view'")
    _enter_loads(page, visits)
    _tab_to(page, "el.id === 'id_subject'")
    page.keyboard.type("disk")
    suggestion = page.locator("#subject-suggestions a").first
    suggestion.wait_for()
    assert "1 entity matches “disk”" in page.locator("#subject-suggestions").inner_text()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent").startswith(LONG)
    _enter_loads(page, visits)

    svg = page.locator("svg.cause-diagram")
    assert svg.is_visible() and svg.locator("line").count() == 2
    _tab_to(page, f"el.classList && el.classList.contains('cause-node') "
                  f"&& el.getAttribute('aria-label').startswith({LONG!r})".replace(
                      "startswith", "startsWith"))
    focused = page.locator(".cause-node:focus")
    assert focused.get_attribute("aria-label") == f"{LONG} (the subject)"
    assert focused.locator("text").text_content() != LONG  # the box itself shows it shortened
    assert page.locator("#cause-focus").inner_text() == f"{LONG} (the subject)"
    assert focused.locator("rect").evaluate("r => getComputedStyle(r).strokeWidth") == "3px"
    visits.shoot()
    axe += blocking_violations(page)
    assert axe == [], "\n".join(axe)
    assert visits.loads == 5
