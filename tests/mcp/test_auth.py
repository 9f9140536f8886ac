"""A Bearer key on every request; refusals are 401 with a challenge and say what to send."""

from __future__ import annotations

import pytest

from accounts.services import api_key_revoke


def _assert_refused(response, words: str):
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert body["error"]["data"]["field"] == "Authorization"
    assert words in body["error"]["message"]
    return body


def test_no_key_is_401_and_says_to_send_a_bearer_header(mcp_for, db):
    response = mcp_for(None, initialize=False).request(
        "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    body = _assert_refused(response, "missing Authorization header")
    assert "Authorization: Bearer" in body["error"]["message"]


@pytest.mark.parametrize("header, words", [
    ("Basic dXNlcjpwdw==", "Bearer scheme"),
    ("Bearer not-a-key", "malformed"),
    # An OAuth access token's kind (emat_), but not one we issued.
    ("Bearer emat_" + "x" * 43, "access token is not valid"),
    ("Bearer em_0123456789ab_" + "A" * 43, "not valid"),
])
def test_a_bad_key_is_401_naming_the_problem(client, db, header, words):
    response = client.post("/mcp", data="{}", content_type="application/json",
                           headers={"Authorization": header, "Accept": "application/json"})
    _assert_refused(response, words)


def test_a_revoked_key_is_401_even_inside_its_open_session(mcp_for, alice):
    session = mcp_for(alice)
    api_key_revoke(key=alice.key)
    _assert_refused(session.request("tools/list"), "revoked")


def test_every_request_needs_the_key_not_only_initialize(mcp_for, alice):
    session = mcp_for(alice)
    session.key = None
    _assert_refused(session.request("tools/list"), "missing")


def test_delete_and_get_need_the_key_too(client, mcp_for, alice):
    session = mcp_for(alice)
    assert client.delete("/mcp", headers={"Mcp-Session-Id": session.session}).status_code == 401
    assert client.get("/mcp").status_code == 401


def test_a_self_hosted_box_serves_keyless_requests_as_the_configured_user(mcp_for, alice,
                                                                           settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    session = mcp_for(None)
    out = session.call("query_memory", {"scope": "shared", "digest": True})["result"]
    assert out["memory"] == "default"
    assert out["isError"] is False


def test_a_self_hosted_user_id_naming_nobody_is_a_server_fault_in_json_at_both_doors(
        client, db, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "nobody"
    over_mcp = client.post("/mcp", data="{}", content_type="application/json")
    assert over_mcp.status_code == 500
    assert over_mcp.json()["error"]["code"] == -32603
    assert "ECHO_MEMORY_USER_ID=nobody" in over_mcp.json()["error"]["message"]
    over_rest = client.post("/api/v1/tools/query_memory", data="{}",
                            content_type="application/json")
    assert over_rest.status_code == 500
    assert over_rest.json()["error"]["code"] == "configuration_error"
