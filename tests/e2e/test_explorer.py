"""The explorer in a browser: an agent's episode is found by search, and its entity, its
episode and its cause chain (drawn as SVG) open from there."""

from __future__ import annotations

import pytest

from tests.factories import Engine, fact, session_for, signed_up


@pytest.mark.django_db(transaction=True)
def test_search_finds_an_agents_fact_and_its_entity_episode_and_cause_chain(live_server, page,
                                                                          visits):
    ops = signed_up("ops@example.com")
    Engine(ops.principal).write(
        assume_new=True, session_id="incident-7",
        entities=[{"name": "Disk full", "type": "event"}, {"name": "Checkout outage",
                                                           "type": "event"},
                  {"name": "Refund wave", "type": "event"}],
        facts=[fact("Disk full", "Checkout outage", "caused",
                    "The full disk on db-2 caused the checkout outage", causal_hint="led_to"),
               fact("Checkout outage", "Refund wave", "caused",
                    "The checkout outage led to a wave of refunds", causal_hint="led_to")])
    page.context.add_cookies([{"name": "sessionid", "value": session_for(ops.user),
                               "url": live_server.url}])

    visits.goto(f"{live_server.url}/dashboard/")
    visits.click("link", "Explore memory default")
    page.get_by_label("Search").fill("what did the full disk on db-2 do")
    visits.click("button", "Search")
    results = page.locator("[aria-labelledby=results-heading] li")
    assert "The full disk on db-2 caused the checkout outage" in results.first.inner_text()
    assert "found by" in results.first.inner_text()

    visits.click("link", "Disk full")
    assert page.get_by_role("heading", level=1).inner_text().startswith("Disk full")
    assert "The full disk on db-2 caused the checkout outage" in page.content()

    page.get_by_role("link", name="episode").first.click()
    page.wait_for_url("**/episodes/**")
    visits.shoot()
    assert "incident-7" in page.content() and "laptop (em_" in page.content()

    visits.goto(f"{live_server.url}/memories/default/cause/?subject=Checkout+outage")
    svg = page.locator("svg.cause-diagram")
    assert svg.is_visible()
    assert svg.locator("line").count() == 2
    for name in ("Disk full", "Checkout outage", "Refund wave"):
        assert svg.locator("text").get_by_text(name, exact=True).is_visible()
