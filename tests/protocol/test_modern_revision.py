"""The official `mcp` Python SDK in its default (auto) mode against the live server: it
probes `server/discover`, is answered, and then speaks 2026-07-28 without a session or a
failed round trip; a 2025 client beside it still gets its session."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.protocol.test_sdk_client import NAMES, incident


class Recorder:
    """Every HTTP exchange the SDK makes: what it asked, with which headers, and the answer."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []

    async def response(self, response: httpx2.Response) -> None:
        request = response.request
        body = json.loads(request.content) if request.content else None
        self.exchanges.append({
            "http": request.method, "status": response.status_code,
            "method": body.get("method") if isinstance(body, dict) else None,
            "request_headers": {k.lower(): v for k, v in request.headers.items()},
            "response_headers": {k.lower(): v for k, v in response.headers.items()},
        })

    @property
    def methods(self) -> list[str | None]:
        return [exchange["method"] for exchange in self.exchanges]


def connect(live, mode: str, body) -> tuple[Any, Recorder]:
    recorder = Recorder()

    async def main():
        http = httpx2.AsyncClient(headers=live.auth, timeout=60,
                                  event_hooks={"response": [recorder.response]})
        async with http, Client(streamable_http_client(live.endpoint, http_client=http),
                                mode=mode) as client:
            return await body(client)

    return anyio.run(main), recorder


async def remember_and_recall(client: Client) -> dict[str, Any]:
    tools = await client.list_tools()
    written = await client.call_tool("write_episode", incident("Elm"))
    recalled = await client.call_tool("query_memory", {
        "scope": "shared", "query": "why did the Elm outage happen", "top_k": 3})
    return {"version": client.protocol_version, "instructions": client.instructions,
            "tools": {tool.name for tool in tools.tools}, "written": written,
            "recalled": recalled}


def test_auto_mode_connects_with_discover_first_and_never_initializes(live):
    out, recorder = connect(live, "auto", remember_and_recall)
    assert out["version"] == "2026-07-28"
    assert out["tools"] == NAMES
    assert "trace_cause" in out["instructions"]
    assert out["written"].is_error is False
    assert out["written"].structured_content["stored"] is True
    facts = out["recalled"].structured_content["facts"]
    assert facts[0]["fact"] == "The Elm outage was caused by the Elm cache filling up."
    # The probe is the first request, and it is answered: no fallback, no failed round trip.
    assert recorder.methods[0] == "server/discover"
    assert "initialize" not in recorder.methods
    assert recorder.methods == ["server/discover", "tools/list", "tools/call", "tools/call"]
    assert all(exchange["status"] == 200 for exchange in recorder.exchanges)
    # Stateless: no session is issued, sent or ended.
    for exchange in recorder.exchanges:
        assert "mcp-session-id" not in exchange["response_headers"]
        assert "mcp-session-id" not in exchange["request_headers"]
        assert exchange["request_headers"]["mcp-protocol-version"] == "2026-07-28"
        assert exchange["request_headers"]["mcp-method"] == exchange["method"]
    calls = [e for e in recorder.exchanges if e["method"] == "tools/call"]
    assert [e["request_headers"]["mcp-name"] for e in calls] == ["write_episode", "query_memory"]


def test_auto_mode_caches_the_tool_list_for_the_ttl_the_server_gives(live):
    async def list_twice(client: Client):
        first = await client.list_tools()
        second = await client.list_tools()
        return [tool.name for tool in first.tools], [tool.name for tool in second.tools]

    (first, second), recorder = connect(live, "auto", list_twice)
    assert first == second
    # The second listing came from the SDK's cache: the server said it stays fresh 10 min.
    assert recorder.methods.count("tools/list") == 1


def test_a_2025_client_beside_it_still_gets_a_session(live):
    async def body(client: Client):
        await client.list_tools()
        return client.protocol_version

    version, recorder = connect(live, "legacy", body)
    assert version == "2025-11-25"
    assert recorder.methods[0] == "initialize"
    issued = recorder.exchanges[0]["response_headers"]["mcp-session-id"]
    listing = next(e for e in recorder.exchanges if e["method"] == "tools/list")
    assert listing["request_headers"]["mcp-session-id"] == issued
    assert ("DELETE", 204) in [(e["http"], e["status"]) for e in recorder.exchanges]
