"""Talking to the fuzz server: exact bytes out (lone surrogates, NaN, deep nesting), replies in."""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from itertools import count
from typing import Any

import httpx

from tests.fuzz.schema_values import Nested

ACCEPT = "application/json, text/event-stream"
PROTOCOL = "2025-06-18"


def encode(value: Any) -> bytes:
    """JSON text for any value the strategies make, as a careless or hostile client sends it.

    Strings are escaped to ASCII, so a lone surrogate travels as `\\ud800` (valid JSON text
    that decodes to an unpaired surrogate); NaN and Infinity are written as Python does;
    `Nested` is written out flat, however deep.
    """
    return _text(value).encode()


def _text(value: Any) -> str:
    if isinstance(value, Nested):
        return "[" * value.depth + '"deep"' + "]" * value.depth
    if isinstance(value, dict):
        return "{" + ",".join(f"{_text(str(k))}:{_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_text(v) for v in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value, allow_nan=True)
    return json.dumps(value, ensure_ascii=True)


# The server closes a connection idle for 5 s (gunicorn's keepalive, echomem/server.py);
# httpx keeps one for 5 s too, so a request sent just then met a closing socket ("Server
# disconnected without sending a response", seen once under load). The client lets go first.
IDLE_LIMITS = httpx.Limits(keepalive_expiry=2.0)


@dataclass
class Reply:
    """One HTTP reply, with its JSON body decoded (from an SSE frame if it came as one)."""

    status: int
    headers: httpx.Headers
    text: str
    body: Any = None
    decoded: bool = False

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def describe(self) -> str:
        shown = self.text if len(self.text) < 2000 else self.text[:2000] + "..."
        return f"HTTP {self.status} {self.content_type or '(no type)'}: {shown}"


def reply_of(response: httpx.Response) -> Reply:
    text = response.content.decode("utf-8", errors="replace")
    reply = Reply(response.status_code, response.headers, text)
    payload = text
    if reply.content_type == "text/event-stream":
        frames = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        payload = frames[0] if len(frames) == 1 else ""
    if reply.content_type in ("application/json", "text/event-stream") and payload:
        with contextlib.suppress(ValueError):
            reply.body, reply.decoded = json.loads(payload), True
    return reply


class Mcp:
    """One MCP session of one key: initialize once, then send whatever the test makes."""

    def __init__(self, base_url: str, key: str, *, version: str = PROTOCOL):
        self.key = key
        self.version = version
        self.http = httpx.Client(base_url=base_url, timeout=120, limits=IDLE_LIMITS,
                                 headers={"Authorization": f"Bearer {key}", "Accept": ACCEPT})
        self.ids = count(1)
        self.session_id = self.open()

    def open(self) -> str:
        reply = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.version, "capabilities": {},
            "clientInfo": {"name": "echo-fuzz", "version": "1"}}}, session=False)
        assert reply.status == 200, reply.describe()
        session_id = reply.headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id=session_id)
        return session_id

    def headers(self, *, session: bool = True, session_id: str | None = None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if session:
            headers["Mcp-Session-Id"] = session_id or self.session_id
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def post(self, message: Any, *, session: bool = True, session_id: str | None = None,
             headers: dict[str, Any] | None = None) -> Reply:
        content = message if isinstance(message, bytes) else encode(message)
        sent = {**self.headers(session=session, session_id=session_id), **(headers or {})}
        return reply_of(self.http.post("/mcp", content=content, headers=sent))

    def request(self, method: str, params: Any = None) -> tuple[int, Reply]:
        message_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": message_id, "method": method}
        if params is not None:
            message["params"] = params
        return message_id, self.post(message)

    def call_tool(self, name: str, arguments: Any) -> tuple[int, Reply]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        self.http.close()


class Rest:
    """The /api/v1 mirror with one key."""

    def __init__(self, base_url: str, key: str):
        self.http = httpx.Client(base_url=base_url, timeout=120, limits=IDLE_LIMITS,
                                 headers={"Authorization": f"Bearer {key}"})

    def call_tool(self, name: str, arguments: Any) -> Reply:
        return reply_of(self.http.post(f"/api/v1/tools/{name}", content=encode(arguments),
                                       headers={"Content-Type": "application/json"}))

    def close(self) -> None:
        self.http.close()
