"""Accessibility in a browser: axe-core (the copy axe-playwright-python ships, so it runs
offline) finds no serious or critical violation, with no rule turned off, on the main pages
signed in and out, in the light and the dark theme, at 1280 and 390 px; the theme follows
the system and the switch remembers a choice; the skip link takes keyboard focus to <main>.

One browser page per test and each page loaded once: the theme is changed by emulating the
system's setting (theme.js follows it live) and the width by resizing the window, so the
four runs of axe on a page cost no reload.
"""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests.factories import Engine, fact, session_for, signed_up

SIGNED_IN = ["/dashboard/", "/keys/new/", "/memories/default/", "/audit/", "/team/",
             "/account/", "/apps/", "/account/security/", "/docs/"]
# /docs/agents/: the guide with the most code blocks and tables, which scroll on a phone.
PUBLIC = ["/", "/login/", "/signup/", "/docs/agents/"]
WIDTHS = (1280, 390)
THEMES = ("light", "dark")
BLOCKING = {"serious", "critical"}

# axe-core as axe-playwright-python ships it. Its Axe.run injects the 500 kB script on every
# call; injected once per loaded page and run four times is a third cheaper.
AXE_SCRIPT = Axe().axe_script


def blocking_violations(page: Page) -> list[str]:
    """axe's serious and critical findings on the page as it is now, one line per node."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    found = page.evaluate("axe.run({resultTypes: ['violations']})")["violations"]
    return [f"{violation['id']} ({violation['impact']}): {node['target']} "
            f"{node.get('failureSummary', '').splitlines()[-1:]}"
            for violation in found if violation["impact"] in BLOCKING
            for node in violation["nodes"]]


def walk(page: Page, visits, base: str, paths: list[str], *,
         pictured: str | None = None) -> list[str]:
    """axe on each page in each theme at each width; `pictured` is also screenshot so."""
    failures = []
    # Bootstrap's colour transitions would have axe measure colours half-way through a
    # change of theme; a person who asks for reduced motion gets none, so the test asks.
    page.emulate_media(reduced_motion="reduce")
    for path in paths:
        visits.goto(base + path)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            for theme in THEMES:
                page.emulate_media(color_scheme=theme)
                # theme.js hears the change as an event, a moment after it.
                expect(page.locator("html")).to_have_attribute("data-bs-theme", theme)
                failures += [f"{path} at {width}px, {theme}: {line}"
                             for line in blocking_violations(page)]
                if path == pictured:
                    visits.shoot()
        page.emulate_media(color_scheme="light")
        page.set_viewport_size({"width": 1280, "height": 900})
    return failures


@pytest.mark.django_db(transaction=True)
def test_signed_in_pages_have_no_serious_accessibility_violation_in_either_theme(
        live_server, page, visits):
    ops = signed_up("ops@example.com")
    Engine(ops.principal).write(
        assume_new=True, session_id="incident-7",
        entities=[{"name": "Disk full", "type": "event"},
                  {"name": "Checkout outage", "type": "event"}],
        facts=[fact("Disk full", "Checkout outage", "caused",
                    "The full disk on db-2 caused the checkout outage", causal_hint="led_to")])
    page.context.add_cookies([{"name": "sessionid", "value": session_for(ops.user),
                               "url": live_server.url}])
    failures = walk(page, visits, live_server.url, SIGNED_IN, pictured="/dashboard/")
    assert failures == [], "\n".join(failures)


@pytest.mark.django_db(transaction=True)
def test_public_pages_have_no_serious_accessibility_violation_in_either_theme(
        live_server, page, visits):
    failures = walk(page, visits, live_server.url, PUBLIC)
    assert failures == [], "\n".join(failures)


@pytest.mark.django_db(transaction=True)
def test_the_theme_follows_the_system_and_the_switch_remembers_a_choice(
        live_server, page, visits):
    theme = page.locator("html")
    switch = page.get_by_role("button", name="Dark mode")
    page.emulate_media(color_scheme="light")
    visits.goto(f"{live_server.url}/login/")
    expect(theme).to_have_attribute("data-bs-theme", "light")
    expect(switch).to_have_attribute("aria-pressed", "false")

    switch.click()  # a choice unlike the system's: kept
    expect(theme).to_have_attribute("data-bs-theme", "dark")
    expect(switch).to_have_attribute("aria-pressed", "true")
    visits.goto(f"{live_server.url}/signup/")
    expect(theme).to_have_attribute("data-bs-theme", "dark")
    page.emulate_media(color_scheme="dark")
    page.emulate_media(color_scheme="light")  # the system changing does not undo a choice
    expect(theme).to_have_attribute("data-bs-theme", "dark")

    switch.click()  # back to the system's theme: the page follows the system again
    expect(theme).to_have_attribute("data-bs-theme", "light")
    page.emulate_media(color_scheme="dark")
    expect(theme).to_have_attribute("data-bs-theme", "dark")
    expect(switch).to_have_attribute("aria-pressed", "true")
    visits.goto(f"{live_server.url}/login/")
    expect(theme).to_have_attribute("data-bs-theme", "dark")


@pytest.mark.django_db(transaction=True)
def test_the_skip_link_is_the_first_stop_and_moves_focus_to_the_main_content(
        live_server, page, visits):
    visits.goto(f"{live_server.url}/")  # a page with no autofocus field
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to main content")
    assert skip.evaluate("element => element === document.activeElement")
    assert skip.is_visible()  # hidden until focused, then shown
    visits.shoot()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")  # the next stop is inside <main>, past the navigation
    assert page.evaluate("document.getElementById('main').contains(document.activeElement)")
    visits.shoot()  # the focus ring of that stop
    for landmark in ("banner", "navigation", "main", "contentinfo"):
        assert page.get_by_role(landmark).count() >= 1, landmark
