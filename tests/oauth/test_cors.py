"""Browser-based MCP clients (the MCP Inspector in a page on another origin) register, trade
codes and revoke with fetch(): those endpoints and the discovery documents answer CORS
preflights and replies, errors too, to any origin and never with credentials. /mcp, the
REST API and the pages send no CORS headers."""

from __future__ import annotations

import pytest
from django.test import Client

ORIGIN = "http://localhost:6274"
OPEN = ["/oauth/token", "/oauth/register", "/oauth/revoke",
        "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/openid-configuration"]


@pytest.mark.parametrize("path", OPEN)
def test_preflight_and_reply_allow_any_origin_without_credentials(db, path):
    client = Client()
    preflight = client.options(path, HTTP_ORIGIN=ORIGIN,
                               HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
                               HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type, "
                                                                  "mcp-protocol-version")
    assert preflight.status_code == 200
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "mcp-protocol-version" in preflight["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in preflight
    reply = (client.get(path, HTTP_ORIGIN=ORIGIN) if path.startswith("/.well-known")
             else client.post(path, data="{}", content_type="application/json",
                              HTTP_ORIGIN=ORIGIN))
    assert reply["Access-Control-Allow-Origin"] == "*", (path, reply.status_code)


@pytest.mark.parametrize("path", ["/mcp", "/api/v1/memories", "/oauth/authorize", "/login/"])
def test_everything_else_sends_no_cors_headers(db, path):
    reply = Client().options(path, HTTP_ORIGIN=ORIGIN,
                             HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
    assert "Access-Control-Allow-Origin" not in reply
