"""What hosted connectors send when they register and when they bring a person to the
consent page: their HTTPS callbacks (Claude.ai, ChatGPT), a native app's loopback one, a
private-use scheme (Cursor), each accepted with 201, as often as a client registers; and
the consent page's CSP lets its form's redirect reach the registered callback."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.test import Client

from tests.oauth.conftest import Flow, pkce_pair

CALLBACKS = {
    "Claude": "https://claude.ai/api/mcp/auth_callback",
    "ChatGPT": "https://chatgpt.com/connector_platform_oauth_redirect",
    "Claude Code": "http://localhost:51234/callback",
    "Cursor": "cursor://anysphere.cursor-mcp/oauth/callback",
}


def register(client, name: str, callback: str, **extra):
    return client.post("/oauth/register", content_type="application/json", data={
        "client_name": name, "redirect_uris": [callback], "response_types": ["code"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none", **extra})


@pytest.mark.parametrize("name", CALLBACKS)
def test_each_client_registers_again_and_again(db, name):
    client = Client()
    first, second = (register(client, name, CALLBACKS[name]) for _ in range(2))
    assert first.status_code == second.status_code == 201, first.content
    assert first.json()["client_id"] != second.json()["client_id"]
    assert first.json()["redirect_uris"] == [CALLBACKS[name]]
    assert first.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in first.json()


def test_a_confidential_registration_gets_its_secret_once(db):
    answer = register(Client(), "Claude", CALLBACKS["Claude"],
                      token_endpoint_auth_method="client_secret_post")
    assert answer.status_code == 201 and len(answer.json()["client_secret"]) >= 32


@pytest.mark.parametrize("callback", ["http://evil.example/callback",
                                      "https://claude.ai/cb#fragment"])
def test_callbacks_that_cannot_be_registered(db, callback):
    refused = register(Client(), "x", callback)
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"


@pytest.mark.parametrize("name", CALLBACKS)
def test_the_consent_form_may_redirect_to_the_registered_callback(signed_in, name):
    answer = register(signed_in, name, CALLBACKS[name])
    flow = Flow(signed_in, client_id=answer.json()["client_id"], redirect_uri=CALLBACKS[name])
    _verifier, challenge = pkce_pair()
    page = signed_in.get(flow.authorize_url(challenge))
    assert page.status_code == 200
    policy = page["Content-Security-Policy"]
    form_action = next(part for part in policy.split(";") if "form-action" in part)
    parts = urlsplit(CALLBACKS[name])
    expected = f"{parts.scheme}://{parts.netloc}" if parts.netloc and parts.scheme != "cursor" \
        else f"{parts.scheme}:"
    assert expected in form_action.split(), (form_action, expected)
    assert "'self'" in form_action
    code = flow.code_from(flow.consent(challenge))
    assert code["state"] == "st-1" and code["iss"] == "http://localhost:8000"
