"""How a reply goes back: JSON, or one Server-Sent Events frame, chosen from the Accept header.

The rule (docs/agents.md repeats it): a successful reply is JSON unless the client
accepts only `text/event-stream`, or ranks it above JSON with q-values; then it is a
single `data:` line holding the same JSON. Errors at the HTTP level (4xx) are always
JSON, since every client reads those first. An Accept header that allows neither
JSON nor SSE gets 406; a missing header accepts anything, as HTTP says.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse

from mcp_gateway.jsonrpc import INVALID_REQUEST, RpcError

JSON = "application/json"
SSE = "text/event-stream"


def _quality(accept: str, media_type: str) -> float:
    """The q-value the header gives `media_type`, most specific match winning (RFC 9110)."""
    kind = media_type.split("/")[0]
    best: tuple[int, float] = (-1, 0.0)
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        pattern = pieces[0].lower()
        q = 1.0
        for parameter in pieces[1:]:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if pattern == media_type:
            specificity = 2
        elif pattern == f"{kind}/*":
            specificity = 1
        elif pattern == "*/*":
            specificity = 0
        else:
            continue
        if specificity > best[0]:
            best = (specificity, q)
    return best[1]


def reply_format(accept: str | None) -> str:
    """JSON or SSE for this request's successful replies; RpcError(406) if neither is allowed."""
    if accept is None or not accept.strip():
        return JSON
    json_q, sse_q = _quality(accept, JSON), _quality(accept, SSE)
    if json_q <= 0 and sse_q <= 0:
        raise RpcError(INVALID_REQUEST,
                       "the Accept header must allow application/json or text/event-stream; "
                       "send `Accept: application/json, text/event-stream`",
                       data={"field": "Accept"}, http_status=406)
    return SSE if sse_q > json_q else JSON


def encode(payload: Any) -> str:
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        # A lone surrogate echoed from the request cannot be UTF-8; as an escape it can.
        text = json.dumps(payload, separators=(",", ":"))
    return text


def reply(payload: Any, media_type: str, *, status: int = 200,
          headers: dict[str, str] | None = None) -> HttpResponse:
    if media_type == SSE:
        body = f"event: message\ndata: {encode(payload)}\n\n"
        response = HttpResponse(body, status=status, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
    else:
        response = HttpResponse(encode(payload), status=status, content_type=JSON)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def accepts_stream(accept: str | None) -> bool:
    """May this reply be an event stream (several messages), whatever it prefers for one?"""
    return accept is None or not accept.strip() or _quality(accept, SSE) > 0


def stream(messages: list[Any]) -> HttpResponse:
    """Several messages on one response stream, each its own event: the reply comes last."""
    body = "".join(f"event: message\ndata: {encode(message)}\n\n" for message in messages)
    response = HttpResponse(body, content_type=SSE)
    response["Cache-Control"] = "no-cache"
    return response


def accepted() -> HttpResponse:
    """Notifications and responses from the client: 202 with no body."""
    response = HttpResponse(status=202)
    del response["Content-Type"]
    return response


def fault(error: RpcError, headers: dict[str, str] | None = None) -> HttpResponse:
    status = error.http_status if error.http_status != 200 else 400
    return reply(error.body(), JSON, status=status, headers=headers)
