"""Every reply of both doors to a request counted against a key's window carries that
window: the draft's RateLimit-Policy and RateLimit, and the older three fields, with the
same numbers, on both limiter backends; a request refused before a key's window carries
none (echomem/ratelimit_headers.py says why)."""

from __future__ import annotations

import re

import pytest

from tests.mcp.test_stateless import stateless

LIMIT = 10
FIELDS = ("RateLimit-Policy", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining",
          "RateLimit-Reset")
_RATELIMIT = re.compile(r'"key";r=(\d+);t=(\d+)')


@pytest.fixture(params=["redis", "database"])
def backend(request, settings, fake_clock):
    settings.RATE_LIMIT_BACKEND = request.param
    settings.RATE_LIMIT_PER_MINUTE = LIMIT
    return request.param


def window(response) -> tuple[int, int]:
    """(remaining, reset) as the reply says them, both forms checked to agree."""
    assert response["RateLimit-Policy"] == f'"key";q={LIMIT};w=60'
    assert response["RateLimit-Limit"] == str(LIMIT)
    match = _RATELIMIT.fullmatch(response["RateLimit"])
    assert match, response["RateLimit"]
    remaining, reset = int(match[1]), int(match[2])
    assert (response["RateLimit-Remaining"], response["RateLimit-Reset"]) == (
        str(remaining), str(reset))
    return remaining, reset


def no_window(response) -> None:
    assert not [name for name in FIELDS if name in response], dict(response.headers)


def test_each_mcp_reply_says_what_is_left_and_when_it_grows(backend, mcp_for, alice,
                                                             fake_clock):
    session = mcp_for(alice, initialize=False)
    initialized = session.request("initialize", {"protocolVersion": "2025-06-18"})
    assert window(initialized) == (9, 60)  # the oldest counted is this one: 60 s to go
    session.session = initialized["Mcp-Session-Id"]
    fake_clock.advance(5)
    assert window(session.notify("notifications/initialized")) == (8, 55)  # a 202, no body
    fake_clock.advance(10.5)
    pinged = session.request("ping")
    assert pinged.status_code == 200 and window(pinged) == (7, 45)  # 44.5 s, rounded up
    unknown_tool = session.request("tools/call", {"name": "nope", "arguments": {}})
    assert window(unknown_tool) == (6, 45)
    bad_arguments = session.request("tools/call", {"name": "query_memory",
                                                   "arguments": {"top_k": "many"}})
    assert window(bad_arguments)[0] == 5
    streamed = session.request("ping", Accept="text/event-stream")
    assert streamed["Content-Type"] == "text/event-stream" and window(streamed)[0] == 4
    assert window(session.request("ping", **{"Mcp-Session-Id": "gone"}))[0] == 3  # 404
    assert window(session.request("ping", Accept="text/html"))[0] == 2            # 406
    assert window(session.post("{"))[0] == 1                                      # 400
    ended = session.client.delete("/mcp", headers=session.headers())
    assert ended.status_code == 204 and window(ended) == (0, 45)
    refused = session.request("ping")
    assert refused.status_code == 429
    assert window(refused) == (0, 45) and refused["Retry-After"] == "45"
    fake_clock.advance(45)  # the initialize leaves the window: room for one
    assert window(mcp_for(alice, initialize=False).request(
        "initialize", {"protocolVersion": "2025-06-18"})) == (0, 5)


def test_a_batch_counts_each_of_its_messages_in_the_reply_it_gets(backend, mcp_for, alice,
                                                                  fake_clock):
    session = mcp_for(alice, version="2025-03-26")  # 2 counted
    batch = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(3)]
    answered = session.post(batch)
    assert answered.status_code == 200 and window(answered) == (5, 60)
    notifications = session.post([{"jsonrpc": "2.0", "method": "notifications/x"}] * 2)
    assert notifications.status_code == 202 and window(notifications)[0] == 3
    too_big = session.post([{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(5)])
    # The POST itself was counted (2 left), its 4 other messages do not fit: what is left
    # is said as it is, and Retry-After waits for room for the whole batch.
    assert too_big.status_code == 429 and window(too_big) == (2, 60)
    assert too_big["Retry-After"] == "60"


def test_each_rest_reply_says_the_same_window_as_mcp(backend, client, alice, mcp_for,
                                                     fake_clock):
    mcp_for(alice)  # 2 on /mcp: one window for both doors
    headers = {"Authorization": f"Bearer {alice.plaintext}"}
    listed = client.get("/api/v1/memories", headers=headers)
    assert listed.status_code == 200 and window(listed) == (7, 60)
    fake_clock.advance(1)
    refused_argument = client.post("/api/v1/tools/query_memory", data={"top_k": "many"},
                                   content_type="application/json", headers=headers)
    assert refused_argument.status_code == 400 and window(refused_argument) == (6, 59)
    assert window(client.get("/api/v1/usage", headers=headers))[0] == 5
    unknown_memory = client.get("/api/v1/memories/nope/export", headers=headers)
    assert unknown_memory.status_code == 404 and window(unknown_memory)[0] == 4
    wrong_method = client.delete("/api/v1/memories", headers=headers)
    assert wrong_method.status_code == 405 and window(wrong_method)[0] == 3
    for left in (2, 1, 0):
        assert window(client.get("/api/v1/memories", headers=headers))[0] == left
    refused = client.get("/api/v1/memories", headers=headers)
    assert refused.status_code == 429
    assert window(refused) == (0, 59) and refused["Retry-After"] == "59"


def test_stateless_mcp_replies_carry_the_window_too(backend, mcp_for, alice):
    mcp = mcp_for(alice, initialize=False)
    assert window(stateless(mcp, "server/discover"))[0] == 9
    assert window(stateless(mcp, "tools/list"))[0] == 8


def test_requests_refused_before_a_keys_window_carry_none(backend, client, mcp_for, alice,
                                                          settings):
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 1
    bad_key = {"Authorization": "Bearer em_000000000000_" + "x" * 43}
    for path in ("/api/v1/memories", "/mcp"):
        no_window(client.get(path))                               # 401, no credential
    first, second = (client.get("/api/v1/memories", headers=bad_key) for _ in range(2))
    assert (first.status_code, second.status_code) == (401, 429)  # the address's window
    no_window(first)
    no_window(second)
    assert second["Retry-After"]
    no_window(mcp_for(None, initialize=False).request("ping"))    # 401 at /mcp
    no_window(client.post("/mcp", data="{}", content_type="application/json",
                          headers={"Origin": "https://evil.example",
                                   "Authorization": f"Bearer {alice.plaintext}"}))  # 403
    no_window(client.get("/api/v1/schema"))  # a public page counts against nothing
    assert window(client.get("/api/v1/memories",
                             headers={"Authorization": f"Bearer {alice.plaintext}"}))[0] == 9


def test_the_openapi_schema_declares_the_headers_on_each_keyed_response(client, db):
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    assert set(schema["components"]["headers"]) == {*FIELDS, "Retry-After"}
    keyed = [operation for operations in schema["paths"].values()
             for operation in operations.values() if operation.get("security")]
    assert len(keyed) >= 5
    for operation in keyed:
        for status, response in operation["responses"].items():
            declared = set(response.get("headers", {}))
            if status in ("401", "403"):  # refused before the key's window
                assert not declared & set(FIELDS), (operation["operationId"], status)
            else:
                assert declared >= set(FIELDS), (operation["operationId"], status)
            assert ("Retry-After" in declared) == (status in ("429", "503"))
    # The schema still loads as OpenAPI (its $refs resolve) for clients and schemathesis.
    import schemathesis

    loaded = schemathesis.openapi.from_dict(schema)
    assert len(list(loaded.get_all_operations())) >= len(keyed)
