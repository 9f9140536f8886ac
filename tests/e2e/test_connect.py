"""The connect snippets in Chromium: the landing page and the dashboard's panel render,
the apps that sign in first, switching tabs shows each client's snippet, and a copy button
puts it on the clipboard."""

from __future__ import annotations

import re

import pytest

from echomem.agent_clients import clients
from echomem.agent_connectors import connectors
from echomem.oauth_settings import oauth_provider

KEYS = re.compile("^With an API key")
SIGN_IN = re.compile("^Sign in from the app")


@pytest.mark.django_db(transaction=True)
def test_landing_and_dashboard_connect_panel_switch_tabs_and_copy(live_server, alice, visits,
                                                                  settings):
    settings.OPEN_SIGNUP = True
    settings.OAUTH2_PROVIDER = oauth_provider(live_server.url)
    page = visits.page
    # Bootstrap skips the tabs' fade then, so a screenshot shows the pane, not a transition.
    page.emulate_media(reduced_motion="reduce")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=live_server.url)
    endpoint = f"{live_server.url}/mcp"
    expected = {c.label: c for c in clients(endpoint)}

    visits.goto(live_server.url + "/", wait_until="networkidle")
    assert page.get_by_role("link", name="Sign up").first.is_visible()
    signing_in = page.get_by_role("group", name=SIGN_IN)
    claude_ai = connectors(endpoint)[0]
    assert claude_ai.snippets[0].text.strip() in signing_in.get_by_role("tabpanel").inner_text()
    landing = page.get_by_role("group", name=KEYS)
    assert expected["Claude Code"].snippets[0].text.strip() in landing.get_by_role(
        "tabpanel").inner_text()
    landing.get_by_role("tab", name="Cursor").click()
    cursor = landing.get_by_role("tabpanel", name="Cursor")
    cursor.wait_for(state="visible")
    assert "Bearer ${env:ECHO_MEM_API_KEY}" in cursor.inner_text()
    assert not landing.get_by_role("tabpanel", name="Claude Code").is_visible()

    visits.goto(live_server.url + "/login/")
    page.get_by_label("Email").fill("alice")
    page.get_by_label("Password").fill("pw-alice")
    visits.click("button", "Sign in")
    assert page.url.endswith("/dashboard/")
    region = page.get_by_role("region", name="Connect your agent")
    signing_in = region.get_by_role("group", name=SIGN_IN)
    for connector in connectors(endpoint):
        signing_in.get_by_role("tab", name=connector.label, exact=True).click()
        page.locator(f"#connect-signin-{connector.id}.show").wait_for()
        shown = signing_in.get_by_role("tabpanel", name=connector.label, exact=True)
        for snippet in connector.snippets:
            assert snippet.text.strip() in shown.inner_text()
    page.screenshot(path=str(visits.folder / "cursor-sign-in-tab.png"), full_page=True)
    panel = region.get_by_role("group", name=KEYS)
    for label, client in expected.items():
        panel.get_by_role("tab", name=label, exact=True).click()
        shown = panel.get_by_role("tabpanel", name=label, exact=True)
        shown.wait_for(state="visible")
        page.locator(f"#connect-{client.id}.show").wait_for()
        for snippet in client.snippets:
            assert snippet.text.strip() in shown.inner_text()
    page.screenshot(path=str(visits.folder / "node-tab.png"), full_page=True)

    panel.get_by_role("tab", name="Codex", exact=True).click()
    page.locator("#connect-codex.show").wait_for()
    button = panel.get_by_role("button", name="Copy Codex snippet 1")
    button.click()
    page.wait_for_function("b => b.textContent === 'Copied'", arg=button.element_handle())
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == expected["Codex"].snippets[0].text
    page.screenshot(path=str(visits.folder / "codex-copied.png"), full_page=True)
