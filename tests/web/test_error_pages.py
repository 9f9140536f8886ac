"""A request that ends in an error outside a view's own reply gets, in a browser, a page in
the site's layout with a way on; /api and /mcp keep answering JSON. Every status the site
hands to Django's handlers (400, 403, a refused CSRF token, 404, 500) is tried at each door."""

from __future__ import annotations

import json

import pytest
from django.test import Client

LAYOUT = ('class="navbar-brand', "bootstrap.min.css")


def _page(response, status: int) -> str:
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    for mark in LAYOUT:
        assert mark in html, f"the {status} page is not in the site's layout"
    assert f"Error {status}" in html
    return html


def test_a_missing_page_is_in_the_layout_with_a_way_home(client, db):
    html = _page(client.get("/no-such-page/"), 404)
    assert "Page not found" in html and 'href="/"' in html and 'href="/login/"' in html
    assert "URLconf" not in html and "echomem.urls" not in html  # nothing of the resolver


def test_signed_in_the_way_on_is_the_dashboard(client, alice):
    client.force_login(alice.user)
    html = _page(client.get("/no-such-page/"), 404)
    assert 'href="/dashboard/"' in html and "Sign out" in html


def test_another_accounts_memory_is_a_404_page_that_says_what_was_missing(client, alice,
                                                                         charlie):
    client.force_login(charlie.user)
    html = _page(client.get("/memories/missing-one/"), 404)
    assert "Unknown memory" in html  # the service's own sentence


def test_a_refused_role_is_a_403_page_that_says_who_may(client, alice, bob):
    client.force_login(bob.user)
    html = _page(client.get("/memories/default/delete/"), 403)
    assert "Only an owner or an admin of the account may delete a memory" in html
    assert 'href="/dashboard/"' in html


def test_an_expired_form_is_a_403_page_that_says_to_reload(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice.user)
    html = _page(browser.post("/memories/new/", {"name": "x"}), 403)
    assert "This form has expired" in html and "reload the page" in html
    assert "CSRF" not in html


def test_a_bad_host_is_a_400_page(client, db):
    html = _page(client.get("/", HTTP_HOST="not-this-server.example"), 400)
    assert "could not be read" in html


@pytest.mark.urls("tests.web.error_urls")
@pytest.mark.injects_server_fault
def test_a_server_fault_is_a_500_page_in_the_layout_drawn_without_the_session(client, alice):
    client.raise_request_exception = False
    client.force_login(alice.user)
    html = _page(client.get("/boom/"), 500)
    assert "Something went wrong on our side" in html and 'href="/"' in html
    assert "a fault injected" not in html
    assert "Sign out" not in html  # drawn from nothing the failed request may have broken


@pytest.mark.urls("tests.web.error_urls")
@pytest.mark.injects_server_fault
@pytest.mark.parametrize("path", ["/api/v1/boom", "/mcp/boom"])
def test_api_and_mcp_faults_stay_json(client, db, path):
    client.raise_request_exception = False
    answer = client.get(path)
    assert answer.status_code == 500 and answer["Content-Type"] == "application/json"
    body = json.loads(answer.content)
    assert body["error"]["code"] in ("internal_error", -32603)


@pytest.mark.parametrize(("path", "key"), [("/api/v1/no-such-endpoint", "code"),
                                           ("/mcp/no-such-endpoint", "code"),
                                           ("/api", "code")])
def test_api_and_mcp_missing_paths_stay_json(client, db, path, key):
    answer = client.get(path)
    assert answer.status_code == 404 and answer["Content-Type"] == "application/json", path
    assert key in json.loads(answer.content)["error"]


def test_api_and_mcp_bad_hosts_stay_json(client, db):
    for path in ("/api/v1/memories", "/mcp"):
        answer = client.get(path, HTTP_HOST="not-this-server.example")
        assert answer.status_code == 400 and answer["Content-Type"] == "application/json"


@pytest.mark.parametrize("signed_in", [False, True])
@pytest.mark.parametrize("path", ["/no-such-page/", "/invitations/not-a-real-token/",
                                  "/verify-email/not-a-real-token/",
                                  "/password-reset/MQ/not-a-real-token/"])
def test_every_refusal_page_offers_a_way_on(client, alice, path, signed_in):
    """Pages that end a path (a missing page, a link that no longer works) point somewhere
    besides the logo: the dashboard for a signed-in person, else the start page."""
    if signed_in:
        client.force_login(alice.user)
    page = client.get(path, follow=True)
    html = page.content.decode()
    main = html.split("<main", 1)[1]
    assert ('href="/dashboard/"' if signed_in else 'href="/"') in main, path
