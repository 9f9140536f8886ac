"""The streamable HTTP transport: handshake, sessions, headers, reply formats, refusals."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from mcp_gateway import sessions
from mcp_gateway.models import McpSession
from mcp_gateway.versions import HANDSHAKE, LATEST, SUPPORTED
from tests.mcp.conftest import Mcp
from tools.registry import TOOLS


@pytest.mark.parametrize("version", HANDSHAKE)
def test_initialize_answers_with_the_clients_version_when_supported(mcp_for, alice, version):
    result = mcp_for(alice, initialize=False).initialize(version)
    assert result["protocolVersion"] == version


def test_initialize_answers_with_our_latest_for_an_unknown_version(mcp_for, alice):
    session = mcp_for(alice, initialize=False)
    response = session.request("initialize", {"protocolVersion": "2024-01-01",
                                              "capabilities": {}})
    assert response.json()["result"]["protocolVersion"] == LATEST


def test_initialize_describes_the_server_and_teaches_the_tools(mcp_for, alice):
    result = mcp_for(alice, initialize=False).initialize()
    assert result["serverInfo"]["name"] == "echo-memory"
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    for tool in ("write_episode", "query_memory", "trace_cause", "record_recall_save",
                 "get_audit_log", "get_episode"):
        assert tool in result["instructions"]


def test_initialize_issues_a_random_session_bound_to_the_key(mcp_for, alice):
    first, second = mcp_for(alice), mcp_for(alice)
    assert first.session != second.session
    assert len(first.session) >= 40
    stored = McpSession.objects.get(pk=first.session)
    assert stored.owner == f"key:{alice.key.pk}"
    assert stored.client_name == "pytest"


def test_initialize_without_protocol_version_names_the_field(mcp_for, alice):
    response = mcp_for(alice, initialize=False).request("initialize", {"capabilities": {}})
    error = response.json()["error"]
    assert error["code"] == -32602
    assert "protocolVersion" in error["message"]


def test_notifications_get_202_with_an_empty_body(mcp_for, alice):
    session = mcp_for(alice)
    response = session.notify("notifications/cancelled", {"requestId": 9})
    assert response.status_code == 202
    assert response.content == b""


def test_ping_answers_an_empty_result(mcp_for, alice):
    response = mcp_for(alice).request("ping")
    assert response.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_get_is_405_with_an_allow_header(client, alice):
    response = client.get("/mcp", headers={"Authorization": f"Bearer {alice.plaintext}",
                                           "Accept": "text/event-stream"})
    assert response.status_code == 405
    assert response["Allow"] == "POST, DELETE"
    assert "POST" in response.json()["error"]["message"]


def test_delete_ends_the_session_and_later_requests_get_404(client, mcp_for, alice):
    session = mcp_for(alice)
    response = client.delete("/mcp", headers=session.headers())
    assert response.status_code == 204
    assert McpSession.objects.get(pk=session.session).ended_at is not None
    after = session.request("ping")
    assert after.status_code == 404
    assert "initialize" in after.json()["error"]["message"]
    assert client.delete("/mcp", headers=session.headers()).status_code == 404


def test_unknown_session_is_404(mcp_for, alice):
    session = mcp_for(alice, initialize=False)
    session.session = "not-a-session-we-issued"
    response = session.request("tools/list")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32001


def test_missing_session_header_is_400_and_says_to_initialize(mcp_for, alice):
    response = mcp_for(alice, initialize=False).request("tools/list")
    assert response.status_code == 400
    assert "Mcp-Session-Id" in response.json()["error"]["message"]


def test_a_session_used_with_another_key_is_404_even_on_the_same_account(mcp_for, alice, bob,
                                                                          charlie):
    session = mcp_for(alice)
    for other in (bob, charlie):
        stolen = mcp_for(other, initialize=False)
        stolen.session = session.session
        assert stolen.request("tools/list").status_code == 404
    assert session.request("tools/list").status_code == 200


def test_an_idle_session_expires_and_use_slides_the_expiry(mcp_for, alice, settings):
    settings.MCP_SESSION_IDLE_SECONDS = 600
    session = mcp_for(alice)
    McpSession.objects.filter(pk=session.session).update(
        last_seen_at=timezone.now() - timedelta(seconds=590))
    sessions.forget()  # this process's copy is from before the row was moved back
    assert session.request("ping").status_code == 200  # within the idle limit: slides forward
    seen = McpSession.objects.get(pk=session.session).last_seen_at
    assert timezone.now() - seen < timedelta(seconds=5)
    McpSession.objects.filter(pk=session.session).update(
        last_seen_at=timezone.now() - timedelta(seconds=601))
    sessions.forget()  # as this process does TTL_SECONDS after it last read the row
    assert session.request("ping").status_code == 404


def test_initialize_clears_the_keys_long_idle_sessions(mcp_for, alice, settings):
    settings.MCP_SESSION_IDLE_SECONDS = 600
    old = mcp_for(alice)
    McpSession.objects.filter(pk=old.session).update(
        last_seen_at=timezone.now() - timedelta(days=2))
    mcp_for(alice)
    assert not McpSession.objects.filter(pk=old.session).exists()


@pytest.mark.parametrize("accept", ["text/html", "application/xml, text/plain"])
def test_an_accept_header_allowing_neither_json_nor_sse_is_406(mcp_for, alice, accept):
    session = mcp_for(alice)
    response = session.request("ping", Accept=accept)
    assert response.status_code == 406
    assert "text/event-stream" in response.json()["error"]["message"]


@pytest.mark.parametrize("accept", ["application/json, text/event-stream", "application/json",
                                    "*/*", "application/json;q=0.9, text/event-stream;q=0.5"])
def test_replies_are_json_when_the_client_accepts_json_at_least_as_much(mcp_for, alice, accept):
    response = mcp_for(alice).request("ping", Accept=accept)
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"] == {}


@pytest.mark.parametrize("accept", ["text/event-stream",
                                    "application/json;q=0.5, text/event-stream"])
def test_replies_are_one_sse_frame_when_the_client_prefers_sse(mcp_for, alice, accept):
    session = mcp_for(alice)
    response = session.request("tools/call", {"name": "query_memory", "arguments": {
        "scope": "shared", "digest": True}}, Accept=accept)
    assert response["Content-Type"].startswith("text/event-stream")
    lines = response.content.decode().splitlines()
    data = [line for line in lines if line.startswith("data:")]
    assert len(data) == 1
    message = json.loads(data[0][5:])
    assert message["result"]["facts"] == []
    assert message["result"]["isError"] is False


def test_initialize_can_be_answered_as_sse_too(mcp_for, alice):
    response = mcp_for(alice, initialize=False).request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}},
        Accept="text/event-stream")
    assert response["Content-Type"].startswith("text/event-stream")
    assert response["Mcp-Session-Id"]
    assert "2025-11-25" in response.content.decode()


@pytest.mark.parametrize("origin", ["http://evil.example.com", "null",
                                    "https://localhost.evil.example.com"])
def test_a_foreign_origin_is_403(mcp_for, alice, origin):
    response = mcp_for(alice, initialize=False).request(
        "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, Origin=origin)
    assert response.status_code == 403
    assert "ECHO_MEMORY_ALLOWED_ORIGINS" in response.json()["error"]["message"]


@pytest.mark.parametrize("origin", ["http://localhost:6274", "http://127.0.0.1:8000",
                                    "http://[::1]:3000"])
def test_local_origins_are_allowed(mcp_for, alice, origin):
    response = mcp_for(alice).request("ping", Origin=origin)
    assert response.status_code == 200


def test_configured_origins_are_allowed(mcp_for, alice, settings):
    settings.MCP_ALLOWED_ORIGINS = ["https://agents.example.com"]
    session = mcp_for(alice)
    assert session.request("ping", Origin="https://agents.example.com").status_code == 200
    assert session.request("ping", Origin="https://other.example.com").status_code == 403


def test_an_unsupported_protocol_version_header_is_400_listing_ours(mcp_for, alice):
    session = mcp_for(alice)
    response = session.request("tools/list", **{"MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == list(SUPPORTED)
    assert response.json()["id"] == 2


def test_a_supported_protocol_version_header_is_accepted(mcp_for, alice):
    session = mcp_for(alice)
    response = session.request("tools/list", **{"MCP-Protocol-Version": "2025-06-18"})
    assert response.status_code == 200


def test_a_2026_header_takes_the_stateless_path_which_wants_its_meta(mcp_for, alice):
    # Served beside the sessions (tests/mcp/test_stateless.py); without `_meta` it is refused.
    response = mcp_for(alice, initialize=False).request(
        "server/discover", **{"MCP-Protocol-Version": "2026-07-28"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


def test_bad_json_is_a_parse_error(mcp_for, alice):
    response = mcp_for(alice).post('{"jsonrpc": "2.0", "id": 1, "method": ')
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize("body, member", [
    ({"id": 1, "method": "ping"}, "jsonrpc"),
    ({"jsonrpc": "2.0", "id": 1}, "method"),
    ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}, "id"),
    ("[1, 2]", "JSON object"),
])
def test_an_invalid_request_names_the_member_at_fault(mcp_for, alice, body, member):
    session = mcp_for(alice, version="2025-03-26")
    response = session.post(body)
    payload = response.json()
    errors = payload if isinstance(payload, list) else [payload]
    assert errors[0]["error"]["code"] == -32600
    assert member in errors[0]["error"]["message"]


def test_an_unknown_method_is_method_not_found(mcp_for, alice):
    response = mcp_for(alice).request("resources/list")
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32601
    assert "tools/list" in error["message"]


def test_an_oversized_body_is_413_with_a_json_rpc_error(mcp_for, alice, settings):
    settings.MAX_BODY_BYTES = 1024 * 1024
    session = mcp_for(alice)
    huge = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "query_memory", "arguments": {"query": "x" * (1024 * 1024)}}}
    response = session.post(huge)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600
    assert "1048576 bytes" in response.json()["error"]["message"]


def test_a_body_that_is_not_json_typed_is_415(mcp_for, alice, client):
    session = mcp_for(alice)
    response = client.post("/mcp", data="a=1", content_type="application/x-www-form-urlencoded",
                           headers=session.headers())
    assert response.status_code == 415
    assert "Content-Type" in response.json()["error"]["message"]


def test_batches_are_refused_on_versions_that_removed_them(mcp_for, alice):
    session = mcp_for(alice, version="2025-06-18")
    response = session.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert response.status_code == 400
    assert "one message per POST" in response.json()["error"]["message"]


def test_batches_are_answered_on_2025_03_26(mcp_for, alice):
    session = mcp_for(alice, version="2025-03-26")
    response = session.post([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "c", "method": "nope"},
    ])
    answers = {answer["id"]: answer for answer in response.json()}
    assert set(answers) == {"a", "b", "c"}
    assert answers["a"]["result"] == {}
    assert len(answers["b"]["result"]["tools"]) == len(TOOLS)
    assert answers["c"]["error"]["code"] == -32601
    only_notifications = session.post([{"jsonrpc": "2.0", "method": "notifications/x"}])
    assert only_notifications.status_code == 202


def test_every_refusal_is_a_json_rpc_error_object(mcp_for, alice):
    session = mcp_for(alice)
    for response in (session.request("nope"), session.post("{"),
                     session.request("ping", Accept="text/html")):
        body = response.json()
        assert body["jsonrpc"] == "2.0"
        assert set(body["error"]) >= {"code", "message"}


def test_reinitializing_opens_a_second_session_and_keeps_the_first(mcp_for, alice):
    session = mcp_for(alice)
    first = session.session
    session.initialize()
    assert session.session != first
    assert isinstance(session, Mcp)
    assert McpSession.objects.filter(pk=first, ended_at__isnull=True).exists()
