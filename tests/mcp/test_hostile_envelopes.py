"""Hostile envelopes and abuse of the limits (issue 8, reproductions 5, 7, 8, 9 and the
abuse the probe did not reach), through both doors where both apply."""

from __future__ import annotations

import json

import pytest

from memories.models import Fact

DEEP = "[" * 5000 + "]" * 5000


def rest(client, actor, tool: str, body: bytes | str, **headers: str):
    if actor is not None:
        headers.setdefault("Authorization", f"Bearer {actor.plaintext}")
    return client.post(f"/api/v1/tools/{tool}", data=body, content_type="application/json",
                       headers=headers)


def rest_error(response, status: int, field: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["field"] == field, error
    return error


def rpc_error(response, status: int, code: int, field: str) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code, error
    assert error["data"]["field"] == field, error
    return error


# 5. JSON nested thousands deep.

def test_a_body_nested_5000_deep_is_a_parse_error_on_mcp(mcp_for, alice):
    rpc_error(mcp_for(alice).post(DEEP), 400, -32700, "body")


def test_deep_nesting_inside_arguments_is_refused_before_anything_walks_it(mcp_for, alice):
    inner = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query_memory",' \
            f'"arguments":{{"scope":"shared","query":"x","extra":{DEEP}}}}}}}'
    error = rpc_error(mcp_for(alice).post(inner), 400, -32700, "body")
    assert "64 deep" in error["message"]


def test_a_rest_body_nested_5000_deep_is_400_in_the_api_shape(client, alice):
    rest_error(rest(client, alice, "query_memory", DEEP), 400, "body")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_json_constants_are_refused(mcp_for, client, alice, constant):
    body = f'{{"jsonrpc":"2.0","id":{constant},"method":"ping"}}'
    rpc_error(mcp_for(alice).post(body), 400, -32700, "body")
    rest_error(rest(client, alice, "query_memory", f'{{"top_k": {constant}}}'), 400, "body")


def test_json_that_is_not_utf_8_is_refused(mcp_for, client, alice):
    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    session = mcp_for(alice)
    rpc_error(session.post(ping.encode("utf-16")), 400, -32700, "body")
    assert session.post(b"\xef\xbb\xbf" + ping.encode()).status_code == 200  # a BOM is fine
    rest_error(rest(client, alice, "query_memory", '{"scope":"shared"}'.encode("utf-32")), 400,
               "body")


@pytest.mark.parametrize("path", ["/api/v1", "/api/v1/", "/api/v1/tools", "/api/v1/nope/x",
                                  "/api", "/api/", "/api/v2/tools"])
def test_every_path_of_the_api_that_is_not_an_endpoint_is_a_json_404(client, alice, path):
    for method in (client.get, client.post):
        response = method(path, headers={"Authorization": f"Bearer {alice.plaintext}"})
        rest_error(response, 404, "path")


# 7. Bodies over the limit, in the documented shape.

def test_a_10_mb_rest_body_is_413_in_the_api_shape(client, alice):
    error = rest_error(rest(client, alice, "query_memory", "x" * (10 * 1024 * 1024)), 413,
                       "body")
    assert error["code"] == "payload_too_large"


def test_a_long_session_id_is_an_unknown_session_not_a_truncated_match(mcp_for, alice):
    session = mcp_for(alice)
    real = session.session
    for forged in (real + "x" * 10_000, "a" * 10_240, real[:30] + "\u00e9" * 13):
        response = session.request("ping", **{"Mcp-Session-Id": forged})
        rpc_error(response, 404, -32001, "Mcp-Session-Id")
    assert session.request("ping").status_code == 200


# 8. Batches count every message; a batch that does not fit runs not at all.

def _writes(count: int, start: int = 0) -> list[dict]:
    return [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "write_episode", "arguments": {
            "scope": "shared", "assume_new": True,
            "entities": [{"name": f"Thing {n}", "type": "thing"},
                         {"name": f"Place {n}", "type": "place"}],
            "facts": [{"source": f"Thing {n}", "target": f"Place {n}", "relation_type": "in",
                       "fact": f"Thing {n} is in place {n}.", "confidence": "extracted"}]}}}
        for n in range(start, start + count)]


def test_each_message_of_a_batch_counts_against_the_rate_limit(
        mcp_for, alice, settings, fake_clock):
    settings.RATE_LIMIT_PER_MINUTE = 10
    session = mcp_for(alice, version="2025-03-26")          # 2 requests
    answered = session.post(_writes(5))                      # 5 more: 7
    assert answered.status_code == 200
    assert len(answered.json()) == 5
    assert Fact.objects.count() == 5
    assert session.request("ping").status_code == 200        # 8
    refused = session.post(_writes(3, start=5))              # 1 counted, 2 more do not fit
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"
    assert refused.json()["error"]["data"]["retry_after"] == 60
    assert "batch" in refused.json()["error"]["message"]
    assert Fact.objects.count() == 5                         # none of the batch ran
    assert session.request("ping").status_code == 200        # 10: the refused POST counted
    assert session.request("ping").status_code == 429


def test_a_batch_larger_than_the_bound_is_refused_whole(mcp_for, alice, settings):
    settings.MCP_MAX_BATCH_MESSAGES = 100
    session = mcp_for(alice, version="2025-03-26")
    error = rpc_error(session.post(_writes(300)), 400, -32600, "body")
    assert "300 messages" in error["message"] and "100" in error["message"]
    assert Fact.objects.count() == 0


def test_a_batch_that_could_never_fit_the_window_is_429_not_a_fault(
        mcp_for, alice, settings, fake_clock):
    settings.RATE_LIMIT_PER_MINUTE = 5
    session = mcp_for(alice, version="2025-03-26")
    assert session.post(_writes(20)).status_code == 429
    assert Fact.objects.count() == 0


@pytest.mark.parametrize("backend", ["redis", "database"])
def test_a_batch_waits_for_as_many_counted_requests_to_leave_as_it_needs(
        mcp_for, alice, settings, fake_clock, backend):
    settings.RATE_LIMIT_BACKEND = backend
    settings.RATE_LIMIT_PER_MINUTE = 6
    session = mcp_for(alice, version="2025-03-26")           # 2 at t=0
    fake_clock.advance(10)
    session.request("ping")                                  # 3 at t=10
    fake_clock.advance(10)
    session.request("ping")                                  # 4 at t=20
    fake_clock.advance(10)
    # 1 counted at t=30 (5 in the window); the other 3 need 2 more slots: the requests
    # of t=0 must leave (t=60), so 30 seconds from now.
    refused = session.post([{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(4)])
    assert refused.status_code == 429
    assert refused["Retry-After"] == "30"


# 9. Origins, versions, and the REST door's Origin rule.

@pytest.mark.parametrize("origin", ["http://evil.com@localhost", "http://localhost@evil.com",
                                    "http://localhost/evil", "http://localhost:8000/x?y",
                                    "http://localhost.evil.com", "file://localhost",
                                    "http://127.0.0.1:99999999"])
def test_an_origin_that_only_looks_local_is_403_at_both_doors(mcp_for, client, alice, origin):
    session = mcp_for(alice)
    rpc_error(session.request("ping", Origin=origin), 403, -32000, "Origin")
    rest_error(rest(client, alice, "query_memory", '{"scope":"shared","query":"x"}',
                    Origin=origin), 403, "Origin")


def test_the_rest_api_takes_browser_calls_only_from_allowed_origins(client, alice, settings):
    settings.MCP_ALLOWED_ORIGINS = ["https://agents.example.com"]
    body = '{"scope":"shared","query":"x"}'
    assert rest(client, alice, "query_memory", body,
                Origin="https://agents.example.com").status_code == 200
    assert rest(client, alice, "query_memory", body, Origin="http://localhost:3000").status_code \
        == 200
    rest_error(rest(client, alice, "query_memory", body, Origin="https://evil.example.com"),
               403, "Origin")
    # No CORS headers: a page on another origin cannot read the answers in any case.
    answered = rest(client, alice, "query_memory", body, Origin="https://agents.example.com")
    assert "Access-Control-Allow-Origin" not in answered


def test_a_request_at_another_version_than_its_session_agreed_is_400(mcp_for, alice):
    session = mcp_for(alice, version="2025-06-18")
    for other in ("2025-03-26", "2025-11-25"):
        error = rpc_error(session.request("ping", **{"MCP-Protocol-Version": other}), 400,
                          -32600, "MCP-Protocol-Version")
        assert "2025-06-18" in error["message"]
        assert error["data"]["negotiated"] == "2025-06-18"
    assert session.request("ping", **{"MCP-Protocol-Version": "2025-06-18"}).status_code == 200
    assert session.request("ping").status_code == 200  # no header: the session's version


def test_a_batch_at_another_version_than_its_session_agreed_is_400(mcp_for, alice):
    session = mcp_for(alice, version="2025-03-26")
    response = session.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
                            **{"MCP-Protocol-Version": "2025-06-18"})
    rpc_error(response, 400, -32600, "MCP-Protocol-Version")


@pytest.mark.parametrize(("client_info", "field"), [
    ({"name": "bad\u0000name", "version": "1"}, "params.clientInfo.name"),
    ({"name": "x", "version": "\ud800"}, "params.clientInfo.version"),
    ({"name": 42, "version": "1"}, "params.clientInfo.name"),
    ("a string", "params.clientInfo"),
])
def test_client_info_the_session_cannot_keep_is_refused_by_member(
        mcp_for, alice, client_info, field):
    session = mcp_for(alice, initialize=False)
    response = session.request("initialize", {"protocolVersion": "2025-06-18",
                                               "clientInfo": client_info})
    rpc_error(response, 400, -32602, field)


# Abuse: bad keys (guesses at a key) are limited per client address. Requests with no
# credential or an OAuth token we never issued guess nothing; they count in the far larger
# challenge window (tests/oauth/test_refusal_counting.py).

BAD_KEY = "em_000000000000_" + "x" * 43
BAD_KEYS = [f"Bearer {BAD_KEY}", "Bearer em_nonsense", "Basic abc", "Bearer"]


def test_requests_without_a_valid_key_are_limited_per_address_at_both_doors(
        mcp_for, client, alice, settings, fake_clock):
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 4
    anonymous = mcp_for(None, initialize=False)
    for header in BAD_KEYS:
        assert anonymous.request("ping", Authorization=header).status_code == 401
    flooded = anonymous.request("ping", Authorization=f"Bearer {BAD_KEY}")
    error = rpc_error(flooded, 429, -32000, "Authorization")
    assert flooded["Retry-After"] == "60"
    assert "without a valid key" in error["message"]
    rest_refused = rest(client, None, "query_memory", "{}", Authorization=f"Bearer {BAD_KEY}")
    assert rest_error(rest_refused, 429, "Authorization")["retry_after"] == 60
    # A valid key from the same address is not limited by others' bad keys, and neither
    # is a request that sends no credential at all (an OAuth client's first request).
    assert mcp_for(alice).request("ping").status_code == 200
    assert anonymous.request("ping").status_code == 401
    # Another address has its own window.
    elsewhere = client.post("/mcp", data="{}", content_type="application/json",
                            REMOTE_ADDR="192.0.2.7", HTTP_AUTHORIZATION=f"Bearer {BAD_KEY}")
    assert elsewhere.status_code == 401
    fake_clock.advance(60)
    assert anonymous.request("ping", Authorization=f"Bearer {BAD_KEY}").status_code == 401


def _with_bad_key(client, **meta):
    return client.post("/mcp", data="{}", content_type="application/json",
                       HTTP_AUTHORIZATION=f"Bearer {BAD_KEY}", **meta)


def test_ipv6_clients_are_limited_per_64(client, db, settings, fake_clock):
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 2
    for host in ("2001:db8::1", "2001:db8::2"):
        assert _with_bad_key(client, REMOTE_ADDR=host).status_code == 401
    assert _with_bad_key(client, REMOTE_ADDR="2001:db8::3").status_code == 429
    assert _with_bad_key(client, REMOTE_ADDR="2001:db8:0:1::1").status_code == 401


def test_behind_trusted_proxies_the_forwarded_address_is_the_client(client, db, settings,
                                                                   fake_clock):
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 1
    settings.TRUSTED_PROXY_HOPS = 1

    def post(forwarded: str):
        return _with_bad_key(client, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded)

    assert post("spoofed, 198.51.100.1").status_code == 401
    assert post("198.51.100.1").status_code == 429
    assert post("198.51.100.2").status_code == 401


def test_keyless_self_hosted_requests_are_served_only_from_this_machine(
        mcp_for, client, alice, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    local = mcp_for(None)  # the test client's address is 127.0.0.1
    assert local.request("ping").status_code == 200
    remote = client.post("/mcp", data=json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18"}}), content_type="application/json",
        REMOTE_ADDR="192.0.2.7")
    error = rpc_error(remote, 401, -32000, "Authorization")
    assert "only from this machine" in error["message"]


@pytest.mark.parametrize("host", ["", "evil.example", "localhost:8000@evil"])
def test_a_host_the_server_does_not_answer_to_is_a_json_400_without_a_traceback(
        client, alice, host):
    """Found by the fuzz suite: an empty Host got Django's HTML 400 and a logged traceback."""
    over_mcp = client.post("/mcp", data="{}", content_type="application/json", HTTP_HOST=host)
    assert "ALLOWED_HOSTS" in rpc_error(over_mcp, 400, -32600, "Host")["message"]
    over_rest = client.get("/api/v1/memories", HTTP_HOST=host,
                           HTTP_AUTHORIZATION=f"Bearer {alice.plaintext}")
    rest_error(over_rest, 400, "Host")
    page = client.get("/", HTTP_HOST=host)
    assert page.status_code == 400 and "html" in page["Content-Type"]
