"""The whole authorization code flow in process, and what a token may then do at /mcp."""

from __future__ import annotations

from django.test import Client

from echomem import oauth_addresses
from tests.mcp.conftest import Mcp
from tests.mcp.test_tools import episode


def test_discovery_registration_consent_token_and_a_call(flow, alice):
    anonymous = Client()
    refused = anonymous.post("/mcp", data="{}", content_type="application/json")
    assert refused.status_code == 401
    challenge = refused["WWW-Authenticate"]
    assert f'resource_metadata="{oauth_addresses.resource_metadata_url()}"' in challenge
    assert 'scope="memory:read memory:write"' in challenge
    resource = anonymous.get("/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == oauth_addresses.mcp_resource()
    assert resource["authorization_servers"] == [oauth_addresses.issuer()]
    server = anonymous.get("/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == oauth_addresses.issuer()
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]

    tokens = flow.tokens()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] <= 3600
    assert set(tokens["scope"].split()) == {"memory:read", "memory:write"}
    mcp = Mcp(Client(), tokens["access_token"])
    mcp.initialize()
    stored = mcp.call("write_episode", episode())
    assert not stored["result"].get("isError"), stored
    found = mcp.call("query_memory", {"query": "why did checkout fail", "scope": "shared"})
    assert not found["result"].get("isError"), found
    facts = found["result"]["structuredContent"]["facts"]
    assert any("pool" in fact["fact"] for fact in facts)


def test_the_consent_form_posts_to_the_bare_path(flow):
    """A browser posts a form without an action to the page's own URL, query and all; the
    request's fields would then arrive twice (query and body), which OAuth refuses."""
    from tests.oauth.conftest import pkce_pair

    _verifier, challenge = pkce_pair()
    page = flow.client.get(flow.authorize_url(challenge)).content.decode()
    assert '<form method="post" action="/oauth/authorize" novalidate>' in page


def test_deny_sends_the_app_access_denied_with_the_issuer(flow):
    """RFC 6749 4.1.2.1 and RFC 9207 2: the error goes to the callback with state and iss,
    and nothing is connected."""
    from accounts.models import Connection
    from tests.oauth.conftest import form_fields, pkce_pair

    _verifier, challenge = pkce_pair()
    page = flow.client.get(flow.authorize_url(challenge, state="deny-me"))
    fields = form_fields(page.content.decode())
    denied = flow.client.post("/oauth/authorize", data=fields)  # no `allow`
    answer = flow.code_from(denied)
    assert answer["error"] == "access_denied" and answer["state"] == "deny-me"
    assert answer["iss"] == oauth_addresses.issuer()
    assert not Connection.objects.exists()


def test_a_token_becomes_its_principal_in_two_queries(flow, django_assert_num_queries):
    """The hot path: the token by its digest, then its connection with its person's
    membership in one statement (last use is written at most once a minute)."""
    from accounts.connections import principal_from_access_token

    token = flow.tokens()["access_token"]
    principal_from_access_token(token)  # the first use writes last_used_at
    with django_assert_num_queries(2):
        principal = principal_from_access_token(token)
    assert principal.connection_id is not None and principal.scopes
