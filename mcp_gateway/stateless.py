"""MCP 2026-07-28 on /mcp: requests that carry their own version, with no session.

A stateless request names its protocol version and the client's capabilities in
`params._meta`, and repeats the version, the method and (for tools/call) the tool's
name in the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, so that a proxy can
route on headers alone. The headers must agree with the body (-32020 when they do
not), since a proxy and this server would otherwise act on different requests.
Checks run in the order of the official SDK's classifier: the `_meta` envelope
(-32602), the headers (-32020), then the version (-32022). Its HTTP statuses follow
the revision's table: 400 for a refused request, 404 for a method not served.

Results carry `resultType` and the server's identity in `_meta`; those a client may
cache (tools/list, server/discover) carry `ttlMs` and `cacheScope`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from mcp_gateway import versions
from mcp_gateway.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Message,
    RpcError,
)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
# A request asks for log messages (notifications/message) by naming a level here; without
# it the server sends none. Levels in rising severity (RFC 5424).
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
HEADER_MISMATCH = -32020
# The request needs a client capability its _meta does not declare (error.data names it).
MISSING_CAPABILITY = -32021
# The body member each method mirrors into Mcp-Name (we serve only tools/call of these).
NAME_MEMBER = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# The tool list and what discover says change only when the server is upgraded, and are
# the same for every caller: anyone may cache them, for ten minutes.
CACHE_HINTS = {"ttlMs": 600_000, "cacheScope": "public"}
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list"})
HTTP_STATUS = {PARSE_ERROR: 400, INVALID_REQUEST: 400, INVALID_PARAMS: 400, HEADER_MISMATCH: 400,
               MISSING_CAPABILITY: 400, versions.UNSUPPORTED_PROTOCOL_VERSION: 400,
               METHOD_NOT_FOUND: 404}
BASE64_WRAPPED = re.compile(r"=\?base64\?(?P<payload>.*)\?=")


def applies(headers: Mapping[str, str], payload: Any) -> bool:
    """Is this POST a 2026-07-28 request? Its header says so, or its `_meta` names a version.

    A request whose `_meta` names a version but whose header is absent or another era's
    is still judged here, so that it hears what disagrees (-32020), not "no session".
    """
    header = (headers.get(VERSION_HEADER) or "").strip()
    if header in versions.MODERN:
        return True
    meta = _meta(payload.get("params")) if isinstance(payload, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def _meta(params: Any) -> Any:
    return params.get("_meta") if isinstance(params, dict) else None


def status_of(error: dict[str, Any]) -> int:
    return HTTP_STATUS.get(error.get("code"), 200)


def check(message: Message, headers: Mapping[str, str]) -> None:
    """Check a stateless request's `_meta` and routing headers against its body."""
    meta = message.params.get("_meta")
    if not isinstance(meta, dict):
        raise _refused(INVALID_PARAMS, "params._meta must be an object carrying "
                       f"{PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r}: a 2026-07-28 "
                       "request names its version and the client's capabilities in every request",
                       "params._meta", message)
    for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY):
        if key not in meta:
            raise _refused(INVALID_PARAMS, f"params._meta is missing {key!r}; every 2026-07-28 "
                           "request carries it (an empty object for no client capabilities)",
                           f"params._meta.{key}", message)
    version = meta[PROTOCOL_VERSION_KEY]
    _check_headers(message, headers, version)
    if not isinstance(meta[CLIENT_CAPABILITIES_KEY], dict):
        raise _refused(INVALID_PARAMS, f"params._meta[{CLIENT_CAPABILITIES_KEY!r}] must be an "
                       "object of the client's capabilities ({} for none)",
                       f"params._meta.{CLIENT_CAPABILITIES_KEY}", message)
    if not isinstance(version, str):
        raise _refused(INVALID_PARAMS, f"params._meta[{PROTOCOL_VERSION_KEY!r}] must be a "
                       "string such as 2026-07-28", f"params._meta.{PROTOCOL_VERSION_KEY}",
                       message)
    if meta.get(LOG_LEVEL_KEY, LOG_LEVELS[0]) not in LOG_LEVELS:
        raise _refused(INVALID_PARAMS, f"params._meta[{LOG_LEVEL_KEY!r}] must be one of "
                       f"{', '.join(LOG_LEVELS)} (or left out for no log messages)",
                       f"params._meta.{LOG_LEVEL_KEY}", message)
    if version not in versions.MODERN:
        raise versions.unsupported(version, versions.MODERN, message.id,
                                   ": name one of them in params._meta and in the "
                                   "MCP-Protocol-Version header, or send initialize for a "
                                   "2025 session")


def _check_headers(message: Message, headers: Mapping[str, str], version: Any) -> None:
    """The routing headers must say what the body says (values compared after trimming)."""
    sent = (headers.get(VERSION_HEADER) or "").strip()
    if not sent or sent != version:
        raise _refused(HEADER_MISMATCH, f"the {VERSION_HEADER} header ({sent or 'missing'}) must "
                       f"equal params._meta[{PROTOCOL_VERSION_KEY!r}] ({version})",
                       VERSION_HEADER, message)
    method = (headers.get(METHOD_HEADER) or "").strip()
    if method != message.method:
        raise _refused(HEADER_MISMATCH, f"the {METHOD_HEADER} header ({method or 'missing'}) "
                       f"must equal the body's method ({message.method}), exactly as written",
                       METHOD_HEADER, message)
    member = NAME_MEMBER.get(message.method)
    named = message.params.get(member) if member else None
    if named is not None and _header_value(headers.get(NAME_HEADER)) != named:
        raise _refused(HEADER_MISMATCH, f"the {NAME_HEADER} header must equal params.{member} "
                       f"({named!r}); send it as {NAME_HEADER}: <the {member}>, base64-wrapped "
                       "as =?base64?...?= when it is not plain ASCII", NAME_HEADER, message)


def _header_value(raw: str | None) -> str | None:
    """A header as the client meant it: trimmed, and unwrapped from =?base64?...?= if wrapped."""
    if raw is None:
        return None
    value = raw.strip()
    wrapped = BASE64_WRAPPED.fullmatch(value)
    if wrapped is None:
        return value
    try:
        return base64.b64decode(wrapped["payload"], validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None  # a corrupt value matches nothing, so the request is refused


def _refused(code: int, text: str, field: str, message: Message) -> RpcError:
    return RpcError(code, text, data={"field": field}, http_status=HTTP_STATUS[code],
                    request_id=message.id)


def shape(method: str, result: dict[str, Any], server_info: dict[str, str]) -> dict[str, Any]:
    """A handler's result as 2026-07-28 sends it: typed (complete unless it asks the client for
    input first), signed with our identity, cache hints."""
    shaped = {"resultType": "complete", **result,
              "_meta": {**result.get("_meta", {}), SERVER_INFO_KEY: server_info}}
    if method in CACHEABLE and shaped["resultType"] == "complete":
        shaped.update(CACHE_HINTS)
    return shaped
