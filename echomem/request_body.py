"""Reading a request's JSON body within limits, the same way at /mcp and /api/v1.

Bounded in size whether it arrives with Content-Length or chunked (echomem/wsgi.py
gives chunked bodies a length), and in nesting: a body nested thousands deep would
otherwise exhaust the parser's recursion and answer 500.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from echomem.errors import InvalidBody, PayloadTooLarge

BODY_FIX = "send one JSON object with Content-Type: application/json"


def too_large() -> PayloadTooLarge:
    limit = settings.MAX_BODY_BYTES
    return PayloadTooLarge(
        f"the request body is larger than {limit} bytes", field="body",
        fix="send smaller requests (split a large write_episode into several)",
    )


def declared_length(meta: dict[str, Any]) -> int:
    try:
        return max(0, int(meta.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def read_limited(stream, meta: dict[str, Any]) -> bytes:
    """The whole body, or PayloadTooLarge without reading past the limit."""
    limit = settings.MAX_BODY_BYTES
    if declared_length(meta) > limit:
        raise too_large()
    body = stream.read(limit + 1) if stream is not None else b""
    if len(body) > limit:
        raise too_large()
    return body


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_json(body: bytes) -> Any:
    """Decode one JSON value; refuse what standard JSON does not allow, and deep nesting."""
    try:
        # UTF-8 only (RFC 8259), a byte order mark tolerated: json.loads would also guess
        # UTF-16 and UTF-32 from the bytes.
        value = json.loads(body.decode("utf-8-sig"), parse_constant=_no_constants)
    except RecursionError:
        raise _too_deep() from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidBody(f"the body is not valid JSON ({exc})", field="body",
                          fix=BODY_FIX) from None
    if _deeper_than(value, settings.MAX_JSON_DEPTH):
        raise _too_deep()
    return value


def _too_deep() -> InvalidBody:
    return InvalidBody(
        f"the body nests arrays or objects more than {settings.MAX_JSON_DEPTH} deep",
        field="body", fix="send the documented, shallow shape: arguments are at most a few "
                          "levels deep")


def _deeper_than(value: Any, limit: int) -> bool:
    """Without recursion, so a deep value cannot exhaust the stack while being measured."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, dict | list))
    return False
