"""POST /mcp: the streamable HTTP transport, as one plain Django view.

Every request goes through the same gates, in this order, each with its own status:
Origin (403), the Bearer key (401), the rate limit (429: every request counts,
whatever follows), the HTTP method (405), Accept (406), the body's size (413) and
type (415), JSON (400, -32700), the MCP-Protocol-Version header (400), the session
(400 when missing, 404 when unknown, ended, idle or another key's). Only then is
the message dispatched.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.principal import BEARER_FIX, Principal, principal_from_authorization
from echomem.errors import AuthenticationFailed, EchoError
from mcp_gateway import methods, ratelimit, replies, sessions, versions
from mcp_gateway.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    SERVER_ERROR,
    Message,
    RpcError,
    error_body,
    parse_message,
    result_body,
)
from mcp_gateway.origins import origin_allowed

logger = logging.getLogger(__name__)
SESSION_HEADER = "Mcp-Session-Id"
ALLOW = "POST, DELETE"


@csrf_exempt
def mcp(request: HttpRequest) -> HttpResponse:
    try:
        principal = _admit(request)
        if request.method == "DELETE":
            sessions.session_end(principal, _session_id(request, required=True))
            return HttpResponse(status=204)
        if request.method != "POST":
            raise RpcError(INVALID_REQUEST,
                           f"{request.method} is not served: this server opens no standalone SSE "
                           "stream; POST JSON-RPC messages, and DELETE to end a session",
                           http_status=405)
        media = replies.reply_format(request.headers.get("Accept"))
        payload = _read_json(request)
        if isinstance(payload, list):
            return _batch(request, principal, payload, media)
        return _single(request, principal, payload, media)
    except RpcError as exc:
        headers = {"Allow": ALLOW} if exc.http_status == 405 else {}
        if exc.http_status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="echo-memory"'
        if exc.http_status == 429:
            headers["Retry-After"] = str(exc.data["retry_after"])
        return replies.fault(exc, headers)


def _admit(request: HttpRequest) -> Principal:
    if not origin_allowed(request.headers.get("Origin")):
        raise RpcError(SERVER_ERROR,
                       f"Origin {request.headers['Origin']} is not allowed to call this server; "
                       "add it to ECHO_MEMORY_ALLOWED_ORIGINS if it is yours", http_status=403)
    try:
        principal = principal_from_authorization(request.headers.get("Authorization"))
    except AuthenticationFailed as exc:
        raise RpcError(SERVER_ERROR, f"{exc.message}: {exc.fix or BEARER_FIX}",
                       data=exc.as_dict(), http_status=401) from None
    decision = ratelimit.count_request(sessions.owner_of(principal))
    if not decision.allowed:
        raise RpcError(SERVER_ERROR, ratelimit.refusal_message(decision),
                       data={"retry_after": decision.retry_after, "limit": decision.limit,
                             "window_seconds": settings.RATE_LIMIT_WINDOW_SECONDS},
                       http_status=429)
    return principal


def _read_json(request: HttpRequest):
    limit = settings.MCP_MAX_BODY_BYTES
    too_big = RpcError(INVALID_REQUEST, f"the request body is larger than {limit} bytes; send "
                       "smaller messages (split a large write_episode into several)",
                       http_status=413)
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise too_big
    body = request.read(limit + 1)
    if len(body) > limit:
        raise too_big
    content_type = request.content_type or ""
    if content_type.lower() != "application/json":
        raise RpcError(INVALID_REQUEST, "send the JSON-RPC message with `Content-Type: "
                       f"application/json` (got {content_type or 'none'})", http_status=415)
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RpcError(PARSE_ERROR, f"the body is not valid JSON ({exc}); send one JSON-RPC "
                       "message as a JSON object", http_status=400) from None


def _session_id(request: HttpRequest, *, required: bool) -> str | None:
    value = (request.headers.get(SESSION_HEADER) or "").strip()
    if not value and required:
        raise RpcError(SERVER_ERROR, f"the {SESSION_HEADER} header is missing; send initialize "
                       "first and repeat the header it returns on every later request",
                       http_status=400)
    return value or None


def _single(request: HttpRequest, principal: Principal, payload, media: str) -> HttpResponse:
    raw_id = payload.get("id") if isinstance(payload, dict) else None
    message = parse_message(payload)
    versions.check_header(request.headers.get("MCP-Protocol-Version"), raw_id)
    if message.method == "initialize":
        return _initialize(principal, message, media)
    session = sessions.session_for(principal, _session_id(request, required=True))
    if not message.is_request:
        return replies.accepted()
    context = methods.Context(principal=principal, session=session)
    return replies.reply(_answer(context, message), media)


def _initialize(principal: Principal, message: Message, media: str) -> HttpResponse:
    if not message.is_request:
        raise RpcError(INVALID_REQUEST, "initialize is a request: give it an id", http_status=400)
    requested = message.params.get("protocolVersion")
    if not isinstance(requested, str):
        raise RpcError(INVALID_PARAMS, "params.protocolVersion is required: the newest MCP "
                       f"version you speak, e.g. {versions.LATEST}", request_id=message.id)
    result = methods.initialize_result(message.params)
    session = sessions.session_open(principal, protocol_version=result["protocolVersion"],
                                    client_info=message.params.get("clientInfo"))
    return replies.reply(result_body(message.id, result), media,
                         headers={SESSION_HEADER: session.id})


def _answer(context: methods.Context, message: Message) -> dict:
    try:
        return result_body(message.id, methods.dispatch(context, message))
    except RpcError as exc:
        return exc.body()
    except EchoError as exc:  # e.g. a misconfigured self-hosted box
        return error_body(message.id, INTERNAL_ERROR, exc.message)
    except Exception:
        logger.exception("MCP %s failed", message.method)
        return error_body(message.id, INTERNAL_ERROR,
                          "internal error; the request was not completed, try again")


def _batch(request: HttpRequest, principal: Principal, payload: list, media: str):
    if not payload:
        raise RpcError(INVALID_REQUEST, "an empty batch holds nothing to do", http_status=400)
    versions.check_header(request.headers.get("MCP-Protocol-Version"))
    session = sessions.session_for(principal, _session_id(request, required=True))
    if session.protocol_version not in versions.BATCHING:
        raise RpcError(INVALID_REQUEST,
                       f"JSON-RPC batches are not part of MCP {session.protocol_version} (removed "
                       "in 2025-06-18); send one message per POST", http_status=400)
    context = methods.Context(principal=principal, session=session)
    answers = []
    for raw in payload:
        try:
            message = parse_message(raw)
        except RpcError as exc:
            answers.append(exc.body())
            continue
        if message.method == "initialize":
            answers.append(error_body(message.id, INVALID_REQUEST,
                                      "initialize cannot be part of a batch; send it alone"))
        elif message.is_request:
            answers.append(_answer(context, message))
    return replies.reply(answers, media) if answers else replies.accepted()
