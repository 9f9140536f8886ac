"""Connecting an app by signing in, in Chromium under the site's CSP: an app registers
itself with a loopback callback, the person signs in, reads the consent page, picks read
only and one memory, and Allow sends the browser on to the app's callback (the consent
page's form-action names that origin, or Chromium would block the redirect). The app trades
the code for tokens, the person revokes it under Connected apps, and the token is refused
at /mcp."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from echomem.oauth_settings import oauth_provider
from memories.graph.services import memory_create
from tests.factories import PASSPHRASE, signed_up
from tests.oauth.conftest import pkce_pair

MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "e2e-connector", "version": "1"}}}


class _Callback(BaseHTTPRequestHandler):
    """The app's loopback callback: it answers every GET with a small page, as a native
    app's listener does once it has the code."""

    def do_GET(self):  # http.server's name for it
        body = b"<!doctype html><title>Connected</title><p>You can close this tab.</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def callback():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Callback)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/callback"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
def test_an_app_is_connected_in_the_browser_then_revoked(live_server, page, visits, settings,
                                                         callback):
    base = live_server.url
    settings.OAUTH2_PROVIDER = oauth_provider(base)  # the issuer is the address dialled
    ada = signed_up("ada@example.com")
    memory_create(account_id=ada.account.pk, name="team-notes")
    registered = httpx.post(f"{base}/oauth/register", json={
        "client_name": "E2E connector", "redirect_uris": [callback],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]

    visits.goto(f"{base}/login/")
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Password").fill(PASSPHRASE)
    visits.click("button", "Sign in")

    verifier, challenge = pkce_pair()
    consent = visits.goto(f"{base}/oauth/authorize?" + urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": callback,
        "state": "st-e2e", "code_challenge": challenge, "code_challenge_method": "S256",
        "scope": "memory:read memory:write", "resource": f"{base}/mcp"}))
    assert page.get_by_role("heading", name="Connect E2E connector").is_visible()
    origin = callback.rsplit("/", 1)[0]
    assert f"form-action 'self' {origin}" in consent.headers["content-security-policy"]
    assert "127.0.0.1" in page.get_by_text("Sends you back to").locator("..").inner_text()
    page.get_by_label("Read only").check()
    page.get_by_label("team-notes").check()
    page.get_by_label("Default memory").select_option(label="team-notes")
    visits.click("button", "Allow")

    landed = urlsplit(page.url)
    assert f"{landed.scheme}://{landed.netloc}{landed.path}" == callback
    answer = {name: values[0] for name, values in parse_qs(landed.query).items()}
    assert answer["state"] == "st-e2e" and answer["iss"] == base
    tokens = httpx.post(f"{base}/oauth/token", data={
        "grant_type": "authorization_code", "code": answer["code"], "redirect_uri": callback,
        "client_id": client_id, "code_verifier": verifier, "resource": f"{base}/mcp"})
    assert tokens.status_code == 200, tokens.text
    token = tokens.json()["access_token"]
    assert tokens.json()["scope"] == "memory:read"
    bearer = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    assert httpx.post(f"{base}/mcp", json=INITIALIZE, headers=bearer).status_code == 200

    visits.goto(f"{base}/dashboard/")
    with page.expect_navigation():
        page.get_by_role("navigation").get_by_role("link", name="Connected apps").click()
    visits.shoot()
    row = page.get_by_role("row").filter(has_text="E2E connector")
    assert "team-notes" in row.inner_text() and "read only" in row.inner_text()
    visits.click("link", "Revoke E2E connector")
    visits.click("button", "Revoke access")
    if page.get_by_role("heading", name="Confirm it's you").is_visible():
        page.get_by_label("Password").fill(PASSPHRASE)
        visits.click("button", "Confirm")
        visits.click("button", "Revoke access")
    assert "E2E connector is disconnected" in page.get_by_role("status").inner_text()
    assert page.get_by_text("No app is connected").is_visible()

    refused = httpx.post(f"{base}/mcp", json=INITIALIZE, headers=bearer)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
