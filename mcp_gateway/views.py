"""POST /mcp: the streamable HTTP transport, as one plain Django view.

Every request goes through the same gates, in this order, each with its own status:
Origin (403), the Bearer key (401; without a usable key, counted per client address:
429), the rate limit (429: every request counts, whatever follows), the HTTP method
(405), Accept (406), the body's size (413) and type (415), JSON (400, -32700), the
MCP-Protocol-Version header (400), the session (400 when missing, 404 when unknown,
ended, idle or another key's; 400 when the header names another version than the
session agreed). Only then is the message dispatched.

A 2026-07-28 request passes the same gates up to the JSON, then takes its own path
(mcp_gateway/stateless.py): no session, its version and headers checked against its
`_meta` and body instead.
"""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.principal import BEARER_FIX, Principal
from echomem import admission, oauth_addresses
from echomem.errors import (
    AuthenticationFailed,
    ConfigurationError,
    EchoError,
    Forbidden,
    InvalidBody,
    PayloadTooLarge,
    RateLimited,
)
from echomem.request_body import parse_json, read_limited
from echomem.request_context import RequestContext
from echomem.text import unstorable
from mcp_gateway import methods, replies, sessions, stateless, versions
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
from mcp_gateway.models import McpSession
from tools.registry import TOOLS

logger = logging.getLogger(__name__)
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
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
                           data={"field": "method"}, http_status=405)
        media = replies.reply_format(request.headers.get("Accept"))
        payload = _read_json(request)
        if stateless.applies(request.headers, payload):
            return _stateless(request, principal, payload, media)
        if isinstance(payload, list):
            return _batch(request, principal, payload, media)
        return _single(request, principal, payload, media)
    except RpcError as exc:
        headers = {"Allow": ALLOW} if exc.http_status == 405 else {}
        challenge = exc.www_authenticate
        if challenge or exc.http_status == 401:
            # Every 401 says where to get a token (RFC 9728 5.1), so an OAuth client can
            # start from this endpoint's URL alone; a key holder reads the message.
            headers["WWW-Authenticate"] = challenge or oauth_addresses.bearer_challenge()
        if exc.http_status == 429:
            headers["Retry-After"] = str(exc.data["retry_after"])
        return replies.fault(exc, headers)


# The admission errors every door shares, as transport faults of this one.
ADMISSION_STATUS = {Forbidden: 403, AuthenticationFailed: 401, RateLimited: 429}


def _admit(request: HttpRequest) -> Principal:
    try:
        return admission.admit(request)
    except AuthenticationFailed as exc:
        fault = _transport_fault(exc, 401)
        # A token that was sent and refused says why (RFC 6750 3.1); no credential, no error.
        error = getattr(exc, "error", None) or (
            "invalid_token" if request.headers.get("Authorization") else None)
        fault.www_authenticate = oauth_addresses.bearer_challenge(
            error=error, description=exc.message if error else None)
        raise fault from None
    except (Forbidden, RateLimited) as exc:
        raise _transport_fault(exc, ADMISSION_STATUS[type(exc)]) from None
    except ConfigurationError as exc:  # the server's own setup, e.g. ECHO_MEMORY_USER_ID
        logger.error("MCP request refused: %s", exc.message)
        raise RpcError(INTERNAL_ERROR, f"the server is misconfigured: {exc.message}",
                       http_status=500) from None


def refuse_missing_scope(principal: Principal, message: Message) -> None:
    """A grant without memory:write calling a tool that writes: 403 insufficient_scope with
    the scopes to ask for (the MCP authorization spec's step-up), before anything runs. Keys
    carry no scopes; their read-only limit is a tool error (tools/calling.py)."""
    if principal.scopes is None or message.method != "tools/call":
        return
    name = message.params.get("name")
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None or not tool.writes or settings.WRITE_SCOPE in principal.scopes:
        return
    fault = RpcError(SERVER_ERROR, f"{name} writes, and this connection was granted "
                     f"{settings.READ_SCOPE} only: it needs {settings.WRITE_SCOPE}; connect "
                     "the app again and allow it to write",
                     data={"field": "Authorization", "error": "insufficient_scope",
                           "scope": settings.WRITE_SCOPE},
                     http_status=403, request_id=message.id)
    fault.www_authenticate = oauth_addresses.bearer_challenge(
        error="insufficient_scope", scope=f"{settings.READ_SCOPE} {settings.WRITE_SCOPE}",
        description=f"{name} needs the {settings.WRITE_SCOPE} scope")
    raise fault


def _transport_fault(exc: EchoError, status: int, code: int = SERVER_ERROR) -> RpcError:
    message = exc.message
    if isinstance(exc, AuthenticationFailed):
        message = f"{exc.message}: {exc.fix or BEARER_FIX}"
    elif exc.fix:
        message = f"{exc.message}; {exc.fix}"
    return RpcError(code, message, data=exc.as_dict(), http_status=status)


def _read_json(request: HttpRequest):
    try:
        body = read_limited(request, request.META)
    except PayloadTooLarge as exc:
        raise _transport_fault(exc, 413, INVALID_REQUEST) from None
    content_type = request.content_type or ""
    if content_type.lower() != "application/json":
        raise RpcError(INVALID_REQUEST, "send the JSON-RPC message with `Content-Type: "
                       f"application/json` (got {content_type or 'none'})",
                       data={"field": "Content-Type"}, http_status=415)
    try:
        return parse_json(body)
    except InvalidBody as exc:
        raise _transport_fault(exc, 400, PARSE_ERROR) from None


def _session_id(request: HttpRequest, *, required: bool) -> str | None:
    value = (request.headers.get(SESSION_HEADER) or "").strip()
    if not value and required:
        raise RpcError(SERVER_ERROR, f"the {SESSION_HEADER} header is missing; send initialize "
                       "first and repeat the header it returns on every later request",
                       data={"field": SESSION_HEADER}, http_status=400)
    return value or None


def _session(request: HttpRequest, principal: Principal, request_id=None) -> McpSession:
    """The request's live session, spoken at the version it agreed."""
    header = versions.check_header(request.headers.get(VERSION_HEADER), request_id)
    session = sessions.session_for(principal, _session_id(request, required=True))
    # A header names the version of this request; a session speaks the one it agreed.
    # (Requests without a session, as 2026-07-28's stateless ones, carry theirs in _meta.)
    if header is not None and header != session.protocol_version:
        raise RpcError(
            INVALID_REQUEST,
            f"{VERSION_HEADER} {header} is not the version this session agreed "
            f"({session.protocol_version}); send {session.protocol_version}, or initialize a "
            "new session at the version you want",
            data={"field": VERSION_HEADER, "negotiated": session.protocol_version},
            http_status=400, request_id=request_id)
    return session


def _single(request: HttpRequest, principal: Principal, payload, media: str) -> HttpResponse:
    message = parse_message(payload)
    if message.method == "initialize":
        versions.check_header(request.headers.get(VERSION_HEADER), message.id)
        return _initialize(principal, message, media)
    session = _session(request, principal, message.id)
    if not message.is_request:
        return replies.accepted()
    refuse_missing_scope(principal, message)
    context = methods.Context.for_request(principal, session, message,
                                          RequestContext.from_headers(request.headers))
    return _reply(request, context, _answer(context, message), media)


def _stateless(request: HttpRequest, principal: Principal, payload, media: str) -> HttpResponse:
    if not isinstance(payload, dict):
        raise RpcError(INVALID_REQUEST, "a 2026-07-28 POST holds one JSON-RPC message; batches "
                       "are not part of MCP since 2025-06-18", data={"field": "body"},
                       http_status=400)
    message = parse_message(payload)
    if not message.is_request:
        # The revision defines no client notifications over HTTP (closing the stream
        # cancels); clients still send some, and they are acknowledged as before.
        return replies.accepted()
    stateless.check(message, request.headers)
    refuse_missing_scope(principal, message)
    context = methods.Context.for_request(principal, None, message,
                                          RequestContext.from_headers(request.headers))
    body = _answer(context, message)
    if "result" in body:
        body["result"] = stateless.shape(message.method, body["result"], methods.server_info())
        return _reply(request, context, body, media)
    status = stateless.status_of(body["error"])
    return replies.reply(body, media if status == 200 else replies.JSON, status=status)


def _reply(request: HttpRequest, context: methods.Context, body: dict, media: str):
    # Notifications the request asked for (progress, log messages) go first on its own
    # response stream; a client that takes no stream gets the reply alone.
    if context.notifications and replies.accepts_stream(request.headers.get("Accept")):
        return replies.stream([*context.notifications, body])
    return replies.reply(body, media)


def _initialize(principal: Principal, message: Message, media: str) -> HttpResponse:
    if not message.is_request:
        raise RpcError(INVALID_REQUEST, "initialize is a request: give it an id",
                       data={"field": "id"}, http_status=400)
    requested = message.params.get("protocolVersion")
    if not isinstance(requested, str):
        raise RpcError(INVALID_PARAMS, "params.protocolVersion is required: the newest MCP "
                       f"version you speak, e.g. {versions.LATEST}",
                       data={"field": "params.protocolVersion"}, request_id=message.id)
    client_info = _client_info(message)
    result = methods.initialize_result(message.params)
    session = sessions.session_open(principal, protocol_version=result["protocolVersion"],
                                    client_info=client_info)
    return replies.reply(result_body(message.id, result), media,
                         headers={SESSION_HEADER: session.id})


def _client_info(message: Message) -> dict[str, str]:
    """clientInfo's name and version, kept with the session; refused if they cannot be."""
    info = message.params.get("clientInfo")
    if info is None:
        return {}
    if not isinstance(info, dict):
        raise RpcError(INVALID_PARAMS, "params.clientInfo must be an object with name and "
                       "version", data={"field": "params.clientInfo"}, request_id=message.id)
    kept = {}
    for member in ("name", "version"):
        value = info.get(member, "")
        problem = ("must be a string" if not isinstance(value, str) else unstorable(value))
        if problem:
            raise RpcError(INVALID_PARAMS, f"params.clientInfo.{member} {problem}",
                           data={"field": f"params.clientInfo.{member}"},
                           request_id=message.id)
        kept[member] = value
    return kept


def _answer(context: methods.Context, message: Message) -> dict:
    try:
        return result_body(message.id, methods.dispatch(context, message))
    except RpcError as exc:
        return exc.body()
    except EchoError as exc:  # e.g. a misconfigured self-hosted box
        return error_body(message.id, INTERNAL_ERROR, exc.message)
    except Exception:
        reference = secrets.token_hex(6)
        logger.exception("MCP %s failed (reference %s)", message.method, reference)
        return error_body(message.id, INTERNAL_ERROR, internal_error_message(reference),
                          {"reference": reference})


def internal_error_message(reference: str) -> str:
    # Said plainly, without "try again": a fault in the server is not fixed by resending,
    # and the client's arguments were not the cause (those are refused with their field).
    return (f"internal error: the server failed while answering this request (reference "
            f"{reference}, logged for its operator); this is a fault in the server, not in "
            "the request or its arguments")


def _batch(request: HttpRequest, principal: Principal, payload: list, media: str):
    if not payload:
        raise RpcError(INVALID_REQUEST, "an empty batch holds nothing to do",
                       data={"field": "body"}, http_status=400)
    session = _session(request, principal)
    if session.protocol_version not in versions.BATCHING:
        raise RpcError(INVALID_REQUEST,
                       f"JSON-RPC batches are not part of MCP {session.protocol_version} (removed "
                       "in 2025-06-18); send one message per POST", data={"field": "body"},
                       http_status=400)
    bound = settings.MCP_MAX_BATCH_MESSAGES
    if len(payload) > bound:
        raise RpcError(INVALID_REQUEST, f"a batch of {len(payload)} messages is over the "
                       f"{bound} this server takes in one POST; send smaller batches",
                       data={"field": "body", "limit": bound}, http_status=400)
    # The POST was counted on admission as one request; its other messages count too,
    # all before any runs, so a batch either fits the key's window whole or runs not at all.
    if len(payload) > 1:
        try:
            admission.count(principal, len(payload) - 1, request=request)
        except RateLimited as exc:
            raise _transport_fault(exc, 429) from None
    context = methods.Context(principal=principal, session=session,
                              request=RequestContext.from_headers(request.headers))
    answers = []
    for raw in payload:
        try:
            message = parse_message(raw)
        except RpcError as exc:
            answers.append(exc.body())
            continue
        if message.method == "initialize":
            answers.append(error_body(message.id, INVALID_REQUEST,
                                      "initialize cannot be part of a batch; send it alone",
                                      {"field": "method"}))
        elif message.is_request:
            answers.append(_answer(context, message))
    return replies.reply(answers, media) if answers else replies.accepted()
