"""MCP 2026-07-28 on /mcp: stateless requests, their headers and `_meta`; 2025 sessions too."""

from __future__ import annotations

import pytest

from billing.models import UsageRecord
from mcp_gateway.models import McpSession
from tests.mcp.conftest import Mcp
from tests.mcp.test_tools import episode
from tools.registry import TOOLS

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def stateless(mcp: Mcp, method: str, params: dict | None = None, *, meta: dict | None = None,
              **headers: str):
    """One 2026-07-28 request with the headers a conforming client sends, unless overridden."""
    sent = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        sent["Mcp-Name"] = (params or {}).get("name")
    sent.update(headers)
    return mcp.request(method, {**(params or {}), "_meta": META if meta is None else meta},
                       **sent)


def test_discover_names_the_modern_version_capabilities_and_instructions(mcp_for, alice):
    response = stateless(mcp_for(alice, initialize=False), "server/discover")
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response
    result = response.json()["result"]
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"] == {
        "tools": {"listChanged": False}, "prompts": {"listChanged": False},
        "resources": {"listChanged": False, "subscribe": False}}
    assert "trace_cause" in result["instructions"]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "echo-memory"
    assert (result["ttlMs"], result["cacheScope"]) == (600_000, "public")


def test_tools_list_and_calls_need_no_session_and_leave_none(mcp_for, alice, settings):
    settings.SELF_HOSTED = False
    mcp = mcp_for(alice, initialize=False)
    listed = stateless(mcp, "tools/list").json()["result"]
    assert len(listed["tools"]) == len(TOOLS)
    assert (listed["ttlMs"], listed["cacheScope"], listed["resultType"]) == (
        600_000, "public", "complete")
    written = stateless(mcp, "tools/call", {"name": "write_episode", "arguments": episode()})
    assert written.status_code == 200
    assert written.json()["result"]["stored"] is True
    assert written.json()["result"]["resultType"] == "complete"
    recalled = stateless(mcp, "tools/call", {"name": "query_memory", "arguments": {
        "scope": "shared", "query": "why did checkout return 502s", "top_k": 1}}).json()["result"]
    assert recalled["facts"][0]["fact"].startswith("Checkout returned 502s")
    assert "ttlMs" not in recalled  # a recall is not cacheable
    assert McpSession.objects.count() == 0
    # Metering is the same as in a session: two facts written, one returned.
    assert list(UsageRecord.objects.order_by("at").values_list("tool", "units")) == [
        ("write_episode", 2), ("query_memory", 1)]


@pytest.mark.parametrize("method, member", [
    ("prompts/list", "prompts"), ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates")])
def test_prompt_and_resource_catalogues_are_empty_and_cacheable(mcp_for, alice, method, member):
    result = stateless(mcp_for(alice, initialize=False), method).json()["result"]
    assert result[member] == []
    assert (result["ttlMs"], result["cacheScope"]) == (600_000, "public")


def test_reading_a_resource_says_there_are_none(mcp_for, alice):
    response = stateless(mcp_for(alice, initialize=False), "resources/read",
                         {"uri": "memory://default"}, **{"Mcp-Name": "memory://default"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["data"]["uri"]) == (-32602, "memory://default")


def test_a_tool_failure_is_still_a_result_with_is_error(mcp_for, alice):
    response = stateless(mcp_for(alice, initialize=False), "tools/call",
                         {"name": "query_memory", "arguments": {"scope": "shared", "query": "x",
                                                                "top_k": 0}})
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True
    assert "top_k" in response.json()["result"]["content"][0]["text"]


def test_the_key_still_authenticates_every_stateless_request(mcp_for):
    response = stateless(mcp_for(None, initialize=False), "server/discover")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_stateless_requests_count_against_the_keys_rate_limit(mcp_for, alice, settings,
                                                              fake_clock):
    settings.RATE_LIMIT_BACKEND = "redis"
    settings.RATE_LIMIT_PER_MINUTE = 2
    mcp = mcp_for(alice, initialize=False)
    assert stateless(mcp, "server/discover").status_code == 200
    assert stateless(mcp, "tools/list").status_code == 200
    refused = stateless(mcp, "tools/list")
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"


@pytest.mark.parametrize("meta, field", [
    ({}, "params._meta.io.modelcontextprotocol/protocolVersion"),
    ({"io.modelcontextprotocol/protocolVersion": MODERN},
     "params._meta.io.modelcontextprotocol/clientCapabilities"),
    ({"io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": ["sampling"]},
     "params._meta.io.modelcontextprotocol/clientCapabilities"),
])
def test_a_broken_meta_envelope_is_400_invalid_params_naming_the_key(mcp_for, alice, meta, field):
    response = stateless(mcp_for(alice, initialize=False), "server/discover", meta=meta)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, field)
    assert response.json()["id"] == 1


def test_client_info_is_optional(mcp_for, alice):
    meta = {k: v for k, v in META.items() if not k.endswith("clientInfo")}
    assert stateless(mcp_for(alice, initialize=False), "server/discover",
                     meta=meta).status_code == 200


@pytest.mark.parametrize("headers, field", [
    ({"MCP-Protocol-Version": None}, "MCP-Protocol-Version"),
    ({"Mcp-Method": None}, "Mcp-Method"),
    ({"Mcp-Method": "TOOLS/CALL"}, "Mcp-Method"),
    ({"Mcp-Method": "prompts/list"}, "Mcp-Method"),
    ({"Mcp-Name": None}, "Mcp-Name"),
    ({"Mcp-Name": "query_memory"}, "Mcp-Name"),
    ({"Mcp-Name": "=?base64?!!!?="}, "Mcp-Name"),
])
def test_routing_headers_that_disagree_with_the_body_are_400_header_mismatch(
        mcp_for, alice, headers, field):
    response = stateless(mcp_for(alice, initialize=False), "tools/call",
                         {"name": "get_usage", "arguments": {}}, **headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["data"]["field"]) == (-32020, field)


@pytest.mark.parametrize("name_header", ["  get_usage  ", "=?base64?Z2V0X3VzYWdl?="])
def test_an_mcp_name_header_is_read_trimmed_and_base64_unwrapped(mcp_for, alice, name_header):
    response = stateless(mcp_for(alice, initialize=False), "tools/call",
                         {"name": "get_usage", "arguments": {}}, **{"Mcp-Name": name_header})
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is False


def test_an_unknown_version_is_400_listing_the_modern_ones(mcp_for, alice):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    response = stateless(mcp_for(alice, initialize=False), "server/discover", meta=meta,
                         **{"MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert (error["data"]["supported"], error["data"]["requested"]) == ([MODERN], "2099-01-01")


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "unknown/method"])
def test_methods_the_revision_removed_or_never_had_are_404_method_not_found(
        mcp_for, alice, method):
    response = stateless(mcp_for(alice, initialize=False), method)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601
    assert response.json()["id"] == 1


def test_an_unknown_tool_is_400_invalid_params(mcp_for, alice):
    response = stateless(mcp_for(alice, initialize=False), "tools/call",
                         {"name": "nope", "arguments": {}})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


def test_a_batch_is_refused_and_a_notification_acknowledged(mcp_for, alice):
    mcp = mcp_for(alice, initialize=False)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    refused = mcp.post([body], **{"MCP-Protocol-Version": MODERN})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32600
    assert mcp.notify("notifications/cancelled", {"_meta": META},
                      **{"MCP-Protocol-Version": MODERN}).status_code == 202


def test_a_2026_header_is_served_statelessly_even_beside_a_session_header(mcp_for, alice):
    session = mcp_for(alice)
    response = stateless(session, "tools/list")
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "complete"


def test_2025_sessions_are_unchanged_beside_the_stateless_revision(mcp_for, alice):
    session = mcp_for(alice, version="2025-11-25")
    assert session.session
    result = session.request("tools/list", **{"MCP-Protocol-Version": "2025-11-25"}).json()
    assert "resultType" not in result["result"] and "ttlMs" not in result["result"]
    # Without the session header a 2025 request is still refused: only 2026 drops it.
    session.session = None
    assert session.request("tools/list").status_code == 400


@pytest.mark.parametrize("params, headers, code, field", [
    ([], {"Mcp-Method": "tools/list"}, -32602, "params"),
    ({"_meta": None}, {"Mcp-Method": "tools/list"}, -32602, "params._meta"),
    ({"_meta": {**META, "io.modelcontextprotocol/protocolVersion": 5}},
     {"Mcp-Method": "tools/list"}, -32020, "MCP-Protocol-Version"),
    ({"_meta": META, "name": 5}, {"Mcp-Method": "tools/call", "Mcp-Name": "5"}, -32020,
     "Mcp-Name"),
])
def test_hostile_stateless_envelopes_are_refused_by_name_never_as_a_fault(
        mcp_for, alice, params, headers, code, field):
    method = headers["Mcp-Method"]
    response = mcp_for(alice, initialize=False).post(
        {"jsonrpc": "2.0", "id": 7, "method": method, "params": params},
        **{"MCP-Protocol-Version": MODERN, **headers})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["data"]["field"]) == (code, field)
