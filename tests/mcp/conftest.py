"""An MCP client over Django's test client: raw HTTP, so every status and header is visible."""

from __future__ import annotations

import json
from typing import Any

import pytest

from echomem import ratelimit

BOTH = "application/json, text/event-stream"


class Mcp:
    def __init__(self, client, key: str | None):
        self.client = client
        self.key = key
        self.session: str | None = None
        self.next_id = 1

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"Accept": BOTH}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        headers.update(extra)
        return {k: v for k, v in headers.items() if v is not None}

    def post(self, body: Any, **headers: str):
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        return self.client.post("/mcp", data=data, content_type="application/json",
                                headers=self.headers(**headers))

    def request(self, method: str, params: dict | None = None, **headers: str):
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        return self.post(body, **headers)

    def notify(self, method: str, params: dict | None = None, **headers: str):
        return self.post({"jsonrpc": "2.0", "method": method, "params": params or {}}, **headers)

    def initialize(self, version: str = "2025-06-18") -> dict:
        response = self.request("initialize", {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "1"}})
        assert response.status_code == 200, response.content
        self.session = response["Mcp-Session-Id"]
        assert self.notify("notifications/initialized").status_code == 202
        return response.json()["result"]

    def call(self, name: str, arguments: dict) -> dict:
        response = self.request("tools/call", {"name": name, "arguments": arguments})
        assert response.status_code == 200, response.content
        return response.json()


@pytest.fixture
def mcp_for(client):
    def make(actor=None, *, initialize: bool = True, version: str = "2025-06-18") -> Mcp:
        session = Mcp(client, actor.plaintext if actor else None)
        if initialize:
            session.initialize(version)
        return session

    return make


class FakeClock:
    """Milliseconds that move only when a test says so."""

    def __init__(self, start_ms: int = 1_800_000_000_000):
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


@pytest.fixture
def fake_clock(monkeypatch) -> FakeClock:
    clock = FakeClock()
    monkeypatch.setattr(ratelimit, "clock", clock)
    return clock
