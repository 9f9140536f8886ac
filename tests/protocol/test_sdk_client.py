"""The official `mcp` Python SDK against the live server: the legacy handshake at 2025-11-25
and at 2025-03-26, and 16 concurrent calls on one session. (Its default, auto mode, which
speaks 2026-07-28 here, is tests/protocol/test_modern_revision.py.)"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import mcp.client.session as sdk_session
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# Our server speaks the handshake versions, where ping still exists.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
NAMES = {"write_episode", "query_memory", "trace_cause", "get_episode", "record_recall_save",
         "get_audit_log", "get_usage", "memory_save", "memory_search", "memory_context",
         "memory_details", "forget"}


def run(live, mode: str, body) -> Any:
    async def main():
        async with httpx2.AsyncClient(headers=live.auth, timeout=60) as http:
            transport = streamable_http_client(live.endpoint, http_client=http)
            async with Client(transport, mode=mode) as client:
                return await body(client)

    return anyio.run(main)


def incident(tag: str) -> dict[str, Any]:
    """A small causal story whose names are unique to one test, so tests never collide."""
    cache, outage, release = f"{tag} cache", f"{tag} outage", f"{tag} release"
    return {
        "scope": "shared", "session_id": tag, "assume_new": True,
        "entities": [{"name": n, "type": "thing"} for n in (cache, outage, release)],
        "facts": [
            {"source": outage, "target": cache, "relation_type": "caused_by_cache",
             "fact": f"The {tag} outage was caused by the {tag} cache filling up.",
             "confidence": "extracted", "causal_hint": "caused_by"},
            {"source": release, "target": cache, "relation_type": "shrank",
             "fact": f"The {tag} release shrank the {tag} cache.",
             "confidence": "extracted", "causal_hint": "led_to"}],
    }


async def round_trip(client: Client, tag: str) -> dict[str, Any]:
    tools = await client.list_tools()
    written = await client.call_tool("write_episode", incident(tag))
    recalled = await client.call_tool("query_memory", {
        "scope": "shared", "query": f"why did the {tag} outage happen", "top_k": 3})
    why = await client.call_tool("trace_cause", {"scope": "shared", "subject": f"{tag} outage",
                                                 "direction": "upstream"})
    bad = await client.call_tool("query_memory", {"scope": "shared", "query": "x", "top_k": 0})
    await client.send_ping()
    return {"version": client.protocol_version, "tools": {t.name for t in tools.tools},
            "instructions": client.instructions, "written": written, "recalled": recalled,
            "why": why, "bad": bad}


def check_round_trip(out: dict[str, Any], tag: str) -> None:
    assert out["tools"] == NAMES
    assert "trace_cause" in out["instructions"]
    assert out["written"].is_error is False
    assert out["written"].structured_content["stored"] is True
    facts = out["recalled"].structured_content["facts"]
    assert facts[0]["fact"].startswith(f"The {tag} outage")
    chain = [link["fact"] for link in out["why"].structured_content["causes"][0]]
    assert chain == [f"The {tag} outage was caused by the {tag} cache filling up.",
                     f"The {tag} release shrank the {tag} cache."]
    assert out["bad"].is_error is True
    assert "top_k" in out["bad"].content[0].text


def test_sdk_legacy_handshake(live):
    out = run(live, "legacy", lambda client: round_trip(client, "Birch"))
    assert out["version"] == "2025-11-25"
    check_round_trip(out, "Birch")


def test_sdk_legacy_handshake_at_2025_03_26(live, monkeypatch):
    # The SDK offers its newest handshake version; an older client offers 2025-03-26.
    monkeypatch.setattr(sdk_session, "LATEST_HANDSHAKE_VERSION", "2025-03-26")
    out = run(live, "legacy", lambda client: round_trip(client, "Cedar"))
    assert out["version"] == "2025-03-26"
    check_round_trip(out, "Cedar")


def test_sixteen_concurrent_calls_on_one_session_are_each_answered_correctly(live):
    tags = [f"Dune{i:02d}" for i in range(16)]

    async def body(client: Client):
        for tag in tags:
            stored = await client.call_tool("write_episode", incident(tag))
            assert stored.structured_content["stored"] is True
        answers: dict[str, Any] = {}

        async def ask(tag: str) -> None:
            answers[tag] = await client.call_tool("trace_cause", {
                "scope": "shared", "subject": f"{tag} outage", "direction": "upstream"})

        async with anyio.create_task_group() as group:
            for tag in tags:
                group.start_soon(ask, tag)
        return answers

    answers = run(live, "legacy", body)
    assert len(answers) == 16
    for tag, answer in answers.items():
        assert answer.structured_content["subject"] == f"{tag} outage"
        assert answer.structured_content["causes"][0][0]["cause"] == f"{tag} cache"


def test_sdk_ends_its_session_with_delete_on_close(live):
    seen: list[tuple[str, int]] = []

    async def record(response: httpx2.Response) -> None:
        seen.append((response.request.method, response.status_code))

    async def main():
        http = httpx2.AsyncClient(headers=live.auth, timeout=60,
                                  event_hooks={"response": [record]})
        async with http, Client(streamable_http_client(live.endpoint, http_client=http),
                                mode="legacy") as client:
            await client.list_tools()

    anyio.run(main)
    assert ("DELETE", 204) in seen
    # Only the optional GET stream is refused (405: this server opens none); no POST fails.
    assert all(status < 400 for method, status in seen if method == "POST")
