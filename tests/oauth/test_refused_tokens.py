"""Tokens refused at /mcp (RFC 6750, RFC 8707, RFC 9728): unknown, expired, for another
resource; refresh tokens rotated, replayed, revoked (RFC 7009, RFC 9700 4.14); and a token
used where it was not issued for (/api/v1). Every 401 names where to get a token."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from accounts import connections
from accounts.models import Connection
from echomem import oauth_addresses
from tests.mcp.test_tools import episode
from tests.oauth.conftest import register, token_error, written


def _stored(token: str):
    return get_access_token_model().objects.filter(
        token_checksum=hashlib.sha256(token.encode()).hexdigest())


def refused_at_mcp(token: str | None, *, says: str | None = None) -> str:
    """The 401 a request with this token (or none) gets, and its challenge."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = Client().post("/mcp", data='{"jsonrpc":"2.0","id":1,"method":"ping"}',
                             content_type="application/json", headers=headers)
    assert response.status_code == 401, response.content
    challenge = response["WWW-Authenticate"]
    assert f'resource_metadata="{oauth_addresses.resource_metadata_url()}"' in challenge
    if token:
        assert 'error="invalid_token"' in challenge, challenge
    else:
        assert "error=" not in challenge, challenge
    if says:
        assert says in response.json()["error"]["message"], response.json()
    return challenge


def test_no_token_and_an_unknown_token_are_challenged(db):
    refused_at_mcp(None)
    refused_at_mcp("emat_" + "x" * 43, says="access token is not valid")


def test_an_expired_token_is_refused_with_the_challenge(flow):
    token = flow.tokens()["access_token"]
    _stored(token).update(expires=timezone.now() - timedelta(seconds=1))
    refused_at_mcp(token, says="expired")


def test_a_token_for_another_resource_is_refused(flow):
    token = flow.tokens()["access_token"]
    _stored(token).update(resource=["https://other.example/mcp"])
    refused_at_mcp(token, says="another resource")
    _stored(token).update(resource=[])  # a token bound to nothing is bound to no /mcp of ours
    refused_at_mcp(token, says="another resource")


def test_a_token_is_refused_at_the_rest_api(flow, alice):
    token = flow.tokens()["access_token"]
    response = Client().get("/api/v1/memories", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401, response.content
    message = response.json()["error"]["message"]
    assert "accepted only at mcp" in message, message


# -- refresh tokens ----------------------------------------------------------------------------

def test_each_refresh_gives_a_new_refresh_token_and_the_old_one_is_refused(flow):
    first = flow.tokens()
    second = flow.refresh(first["refresh_token"])
    assert second.status_code == 200, second.content
    second = second.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    assert flow.mcp(second["access_token"]).request("ping").status_code == 200
    token_error(flow.refresh(first["refresh_token"]), "invalid_grant")


def test_a_replayed_refresh_token_revokes_the_whole_grant(flow):
    """RFC 9700 4.14.2: the replay may be the attacker's or the client's; either way the
    newest pair of the family stops working too."""
    first = flow.tokens()
    second = flow.refresh(first["refresh_token"]).json()
    third = flow.refresh(second["refresh_token"]).json()
    token_error(flow.refresh(first["refresh_token"]), "invalid_grant")
    refused_at_mcp(third["access_token"])
    token_error(flow.refresh(third["refresh_token"]), "invalid_grant")


def test_a_refresh_token_of_a_connection_revoked_on_the_web_is_refused(flow, alice):
    tokens = flow.tokens()
    connection = Connection.objects.get(user=alice.user)
    page = flow.client.post(f"/apps/{connection.pk}/revoke/")
    assert page.status_code == 302, page.content[:2000]
    before = written()
    token_error(flow.refresh(tokens["refresh_token"]), "invalid_grant")
    refused_at_mcp(tokens["access_token"])
    assert written() == before


def test_a_refresh_token_of_a_connection_revoked_by_the_service_is_refused(flow, alice):
    tokens = flow.tokens()
    connections.revoke(Connection.objects.get(user=alice.user), actor_id=alice.user.pk)
    token_error(flow.refresh(tokens["refresh_token"]), "invalid_grant")
    refused_at_mcp(tokens["access_token"])


def test_rfc_7009_revocation_of_the_refresh_token_ends_both(flow):
    tokens = flow.tokens()
    revoked = flow.revoke(tokens["refresh_token"], token_type_hint="refresh_token")
    assert revoked.status_code == 200, revoked.content
    token_error(flow.refresh(tokens["refresh_token"]), "invalid_grant")
    refused_at_mcp(tokens["access_token"])


def test_rfc_7009_revocation_of_the_access_token_ends_its_refresh_token_too(flow):
    tokens = flow.tokens()
    assert flow.revoke(tokens["access_token"]).status_code == 200
    refused_at_mcp(tokens["access_token"])
    token_error(flow.refresh(tokens["refresh_token"]), "invalid_grant")


def test_another_client_cannot_revoke_a_clients_tokens(flow, signed_in):
    """RFC 7009 2.1: the server checks the token was issued to the client asking. The
    answer is 200 all the same (2.2: it does not tell whether the token exists)."""
    tokens = flow.tokens()
    other = register(signed_in)
    for token in (tokens["refresh_token"], tokens["access_token"]):
        assert other.revoke(token).status_code == 200
    assert flow.mcp(tokens["access_token"]).request("ping").status_code == 200
    assert flow.refresh(tokens["refresh_token"]).status_code == 200


def test_another_client_cannot_refresh_a_clients_token(flow, signed_in):
    tokens = flow.tokens()
    other = register(signed_in)
    before = written()
    token_error(other.refresh(tokens["refresh_token"]), "invalid_grant")
    assert written() == before
    assert flow.refresh(tokens["refresh_token"]).status_code == 200


# -- what a grant may do -----------------------------------------------------------------------

def test_a_read_only_grant_calling_a_write_tool_is_403_insufficient_scope(flow):
    tokens = flow.tokens(choices={"access": "read"})
    assert tokens["scope"] == "memory:read"
    mcp = flow.mcp(tokens["access_token"])
    before = written()
    response = mcp.request("tools/call", {"name": "write_episode", "arguments": episode()})
    assert response.status_code == 403, response.content
    challenge = response["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge, challenge
    assert 'scope="memory:read memory:write"' in challenge, challenge
    assert f'resource_metadata="{oauth_addresses.resource_metadata_url()}"' in challenge
    assert written() == before
    # Reading is what it was granted.
    found = mcp.call("query_memory", {"query": "checkout", "scope": "shared"})
    assert not found["result"].get("isError"), found


def test_an_app_asking_to_read_only_cannot_be_granted_writing(flow):
    assert flow.tokens(scope="memory:read")["scope"] == "memory:read"
    before = written()
    forged = flow.consent("x" * 43, choices={"access": "write"}, scope="memory:read")
    assert forged.status_code == 200 and "access" in forged.context["form"].errors
    assert written() == before
