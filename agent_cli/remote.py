"""Talking to the Echo Memory endpoint: MCP JSON-RPC over HTTP, one session per command.

A small synchronous client over httpx rather than the SDK's async one: the command needs
to tell a person exactly what went wrong (no key, key refused, server down, rate limited),
which means seeing the HTTP status and headers before any protocol layer wraps them; and
the stdio bridge runs it in a worker thread, so one client serves both.
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from agent_cli.config import KEY_ENV, Settings
from echomem.request_context import PROJECT_HEADER

PROTOCOL = "2025-06-18"
CLIENT_INFO = {"name": "echo-memory-agent-cli", "version": "1"}


class RemoteError(Exception):
    """Something the person can fix, said in one or two sentences."""


class ToolError(RemoteError):
    """The tool answered with isError: its message says what to change."""


class Unavailable(RemoteError):
    """The server did not take the request now (down, overloaded, rate limited past our
    wait) and did nothing with it: the same request can go through later."""


class RateLimited(Unavailable):
    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


# On 429 the server says in Retry-After how long until it takes another request from this
# key, and a refused request did nothing, so waiting and sending it again is safe. Commands
# and the bridge wait up to a budget per request (`rate_wait()`, ECHO_MEM_RATE_WAIT); long
# jobs (import, export) pass budget None and wait as often as it takes, bounded per wait.
MAX_RATE_WAIT_SECONDS = 120
MAX_RATE_WAITS = 50
RATE_WAIT_ENV = "ECHO_MEM_RATE_WAIT"
# A coding session's burst (a search per prompt, a save per decision, the close) is over
# within this, so a command or bridge call that meets the limit usually just waits.
DEFAULT_RATE_WAIT_SECONDS = 30.0


def rate_wait() -> float:
    """Seconds a request may wait on 429 in all (ECHO_MEM_RATE_WAIT; 0: never wait)."""
    raw = os.environ.get(RATE_WAIT_ENV, "").strip()
    if not raw:
        return DEFAULT_RATE_WAIT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise RemoteError(f"{RATE_WAIT_ENV}={raw!r} is not a number of seconds from 0 to "
                          f"3600: set it to e.g. 30, or unset it (default "
                          f"{DEFAULT_RATE_WAIT_SECONDS:g})")
    return seconds


def say_waiting(seconds: float) -> None:
    """The default word on a wait: stderr, never stdout (the bridge speaks MCP there)."""
    print(f"memory: rate limited by the server; waiting {seconds:g} s (its Retry-After), "
          "then sending the request again", file=sys.stderr, flush=True)


class Remote:
    def __init__(self, settings: Settings, *, project: str | None = None, timeout: float = 60,
                 on_rate_limit: Callable[[float], None] = say_waiting,
                 wait_budget: float | str | None = "configured"):
        if not settings.url:
            raise RemoteError(
                "no Echo Memory endpoint is configured: set ECHO_MEM_URL (for example "
                "http://localhost:8000/mcp), or run `memory config set --url URL`, or start "
                "the local server with `echo-memory quickstart`")
        _check_url(settings.url)
        self.settings = settings
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json"}
        if settings.key:
            headers["Authorization"] = f"Bearer {settings.key}"
        if project:
            headers[PROJECT_HEADER] = project
        self.http = httpx.Client(headers=headers, timeout=timeout)
        self.session: str | None = None
        self.ids = 0
        # On 429: say so (with the seconds), wait, send again; up to `wait_budget` seconds a
        # request (None: no total bound), never a wait longer than MAX_RATE_WAIT_SECONDS.
        self.on_rate_limit = on_rate_limit
        self.wait_budget = rate_wait() if wait_budget == "configured" else wait_budget
        self.rate_waits = 0

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.session:
            with contextlib.suppress(httpx.HTTPError):  # idle sessions expire anyway
                self.http.delete(self.settings.url, headers={"Mcp-Session-Id": self.session})
            self.session = None
        self.http.close()

    def _post(self, body: dict[str, Any], headers: dict[str, str] | None = None
              ) -> httpx.Response:
        if headers is None:
            headers = ({"Mcp-Session-Id": self.session, "MCP-Protocol-Version": PROTOCOL}
                       if self.session else {})
        waited = 0.0
        budget = math.inf if self.wait_budget is None else self.wait_budget
        while True:
            reply = self._send(body, headers)
            if reply.status_code != 429 or self.rate_waits >= MAX_RATE_WAITS:
                return reply
            wait = _retry_after(reply)
            if waited + wait > budget:
                return reply  # longer than we may wait: _explain says so
            self.rate_waits += 1
            waited += wait
            self.on_rate_limit(wait)
            time.sleep(wait)

    def _send(self, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        try:
            return self.http.post(self.settings.url, json=body, headers=headers)
        except httpx.ConnectError as exc:
            raise Unavailable(f"cannot reach {self.settings.url} ({exc}): is the server "
                              "running? Start it with `echo-memory serve`, or fix ECHO_MEM_URL"
                              ) from exc
        except httpx.TransportError as exc:  # timeouts, dropped connections
            raise Unavailable(f"the request to {self.settings.url} failed: {exc}") from exc
        except httpx.HTTPError as exc:
            raise RemoteError(f"the request to {self.settings.url} failed: {exc}") from exc

    def _explain(self, reply: httpx.Response) -> RemoteError:
        detail = _error_message(reply)
        if reply.status_code == 401:
            if not self.settings.key:
                return RemoteError(f"the server wants an API key and none is set: export "
                                   f"{KEY_ENV}=em_... or run `memory config set --key` "
                                   f"({detail})")
            return RemoteError(f"the server refused the API key from "
                               f"{self.settings.source.get('key', 'the settings')} (401: "
                               f"{detail}): it is wrong or revoked; make a new one in the "
                               "dashboard")
        if reply.status_code == 429:
            wait = _retry_after(reply)
            return RateLimited(f"rate limited by the server: it takes requests from this key "
                               f"again in {wait:g} s, longer than this command waits "
                               f"({_budget(self.wait_budget)})", wait)
        if reply.status_code in {500, 502, 503, 504}:
            return Unavailable(f"the server answered {reply.status_code} ({detail}): it "
                               "could not take the request now; try again shortly")
        if reply.status_code == 404 and not self.session:
            return RemoteError(f"{self.settings.url} is not an MCP endpoint (404, {detail}): "
                               "the URL ends in /mcp")
        if 300 <= reply.status_code < 400:
            where = reply.headers.get("Location", "elsewhere")
            return RemoteError(f"{self.settings.url} redirects ({reply.status_code}) to "
                               f"{where}: use the endpoint's own URL (it ends in /mcp)")
        hint = ""
        if not self.session and not self.settings.url.rstrip("/").endswith("/mcp"):
            hint = " (is the URL the MCP endpoint? it ends in /mcp)"
        return RemoteError(f"the server answered {reply.status_code}: {detail}{hint}")

    def _rpc(self, method: str, params: dict[str, Any], *, retry: bool = True) -> Any:
        if self.session is None and method != "initialize":
            self._open()
        self.ids += 1
        reply = self._post({"jsonrpc": "2.0", "id": self.ids, "method": method,
                            "params": params})
        if reply.status_code == 404 and self.session and retry:
            self.session = None  # expired or ended: open a new one, once
            return self._rpc(method, params, retry=False)
        if reply.status_code != 200:
            raise self._explain(reply)
        message = _message(reply, self.ids)
        if not isinstance(message, dict) or not isinstance(
                message.get("result", message.get("error")), dict):
            raise RemoteError(f"{self.settings.url} answered {method} with JSON that is not an "
                              "MCP reply: is the URL the server's MCP endpoint (it ends in "
                              "/mcp)?")
        if "error" in message:
            error = message["error"]
            raise RemoteError(f"{method} failed: {error.get('message')} "
                              f"(code {error.get('code')})")
        if method == "initialize":
            self.session = reply.headers.get("mcp-session-id")
        return message["result"]

    def _open(self) -> None:
        self._rpc("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                 "clientInfo": CLIENT_INFO})
        headers = {"Mcp-Session-Id": self.session or "", "MCP-Protocol-Version": PROTOCOL}
        body = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}
        self._post(body, headers)

    def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = self._rpc("tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(result.get("tools", []))
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    def call_raw(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The whole tools/call result, error or not (what the stdio bridge passes on)."""
        return self._rpc("tools/call", {"name": name, "arguments": arguments})

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's structured output; a tool error raises ToolError with its message."""
        result = self.call_raw(name, arguments)
        if result.get("isError"):
            raise ToolError(_text(result) or f"{name} failed")
        if isinstance(result.get("structuredContent"), dict):
            return result["structuredContent"]
        text = _text(result)
        try:
            parsed = json.loads(text)
        except ValueError:
            return {"text": text}
        return parsed if isinstance(parsed, dict) else {"results": parsed}


def _budget(budget: float | None) -> str:
    if budget is None:
        return f"at most {MAX_RATE_WAITS} waits"
    return f"{budget:g} s; ECHO_MEM_RATE_WAIT sets it"


def _retry_after(reply: httpx.Response) -> float:
    try:
        seconds = float(reply.headers.get("Retry-After", "1"))
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.5), MAX_RATE_WAIT_SECONDS)


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", [])
                     if block.get("type") == "text")


def _message(reply: httpx.Response, wanted: int) -> dict[str, Any]:
    """The JSON-RPC reply with our id, from a JSON body or an SSE stream."""
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        for line in reply.text.splitlines():
            if line.startswith("data:"):
                message = json.loads(line[5:].strip())
                if isinstance(message, dict) and message.get("id") == wanted:
                    return message
        raise RemoteError("the server's event stream held no reply to our request")
    try:
        return reply.json()
    except ValueError as exc:
        raise RemoteError(f"{reply.url} answered with {_body(reply)} instead of JSON: is the "
                          "URL the server's MCP endpoint (it ends in /mcp)?") from exc


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise RemoteError(f"{url!r} is not an http(s) URL: give the whole endpoint, e.g. "
                          "https://memory.example.com/mcp (ECHO_MEM_URL or `memory config "
                          "set --url`)")


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def _body(reply: httpx.Response) -> str:
    """What a reply that is not the JSON we expect holds, in a few words on one line: a
    web page is named as such (with its title), never printed."""
    text = reply.text
    kind = reply.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in {"text/html", "application/xhtml+xml"} or text.lstrip()[:15].lower().startswith(
            ("<!doctype html", "<html")):
        title = _TITLE.search(text)
        named = " ".join(html.unescape(title.group(1)).split())[:80] if title else ""
        return f"an HTML page{f' ({named!r})' if named else ''}"
    first = " ".join(text.split())
    if not first:
        return "an empty body"
    return f"{kind or 'text'} {first[:80]!r}{'…' if len(first) > 80 else ''}"


def _error_message(reply: httpx.Response) -> str:
    try:
        return " ".join(str(reply.json()["error"]["message"]).split())
    except (ValueError, KeyError, TypeError):
        return _body(reply) if reply.text.strip() else reply.reason_phrase
