"""The pages a visitor reaches without signing in render in Chromium without errors."""

from __future__ import annotations

import pytest

from echomem.oauth_settings import oauth_provider

PAGES = [
    ("/", "Echo Memory"),
    ("/admin/login/", "Log in"),
    ("/api/v1/docs", "Echo Memory"),
    ("/docs/", "Architecture"),
    ("/docs/architecture/", "One tool call, end to end"),
]


@pytest.mark.django_db(transaction=True)
def test_public_pages_render_without_console_errors(live_server, page, visits, settings):
    settings.OAUTH2_PROVIDER = oauth_provider(live_server.url)
    for path, text in PAGES:
        response = visits.goto(live_server.url + path, wait_until="networkidle")
        assert response is not None and response.status == 200, path
        assert text in page.content(), path
    assert visits.count >= len(PAGES)
    # The home page shows this server's endpoint as configured (what apps sign in for).
    visits.goto(live_server.url + "/")
    assert f"{live_server.url}/mcp" in page.content()
