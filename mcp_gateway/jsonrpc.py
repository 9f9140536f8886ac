"""JSON-RPC 2.0 envelopes: what a message must look like, and how replies and faults are shaped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Implementation-defined band (-32000..-32099), as the MCP SDKs use it.
SERVER_ERROR = -32000
UNSUPPORTED_PROTOCOL_VERSION = -32022


class RpcError(Exception):
    """A protocol fault: answered as a JSON-RPC error, at `http_status` when it has its own."""

    def __init__(self, code: int, message: str, *, data: dict[str, Any] | None = None,
                 http_status: int = 200, request_id: Any = None,
                 www_authenticate: str | None = None):
        super().__init__(message)
        # The WWW-Authenticate challenge of a 401 or a 403 for a missing scope.
        self.www_authenticate = www_authenticate
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.request_id = request_id

    def body(self) -> dict[str, Any]:
        return error_body(self.request_id, self.code, self.message, self.data)


@dataclass
class Message:
    """One JSON-RPC message from the client: a request (has an id) or a notification."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)
    id: Any = None
    is_request: bool = True


def error_body(request_id: Any, code: int, message: str,
               data: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_body(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def parse_message(raw: Any) -> Message:
    """Validate one decoded JSON value as a client message; refusals name the member at fault."""
    if not isinstance(raw, dict):
        raise RpcError(INVALID_REQUEST, "each JSON-RPC message must be a JSON object",
                       data={"field": "body"}, http_status=400)
    has_id = "id" in raw
    request_id = raw.get("id")
    if has_id and not _valid_id(request_id):
        raise RpcError(INVALID_REQUEST, 'the member "id" must be a string or an integer; omit it '
                       "only for notifications", data={"field": "id"}, http_status=400)
    if raw.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'the member "jsonrpc" must be the string "2.0"',
                       data={"field": "jsonrpc"}, http_status=400, request_id=request_id)
    if "result" in raw or "error" in raw:
        # This server never sends requests to the client, so no response can be owed to it.
        raise RpcError(INVALID_REQUEST, "this server sends no requests, so it takes no responses",
                       data={"field": "result" if "result" in raw else "error"},
                       http_status=400, request_id=request_id)
    method = raw.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, 'the member "method" must be a non-empty string',
                       data={"field": "method"}, http_status=400, request_id=request_id)
    params = raw.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, 'the member "params" must be a JSON object',
                       data={"field": "params"}, request_id=request_id)
    return Message(method=method, params=params, id=request_id, is_request=has_id)


def _valid_id(value: Any) -> bool:
    """A string or an integer (JSON-RPC also allows null, which MCP forbids for requests)."""
    return isinstance(value, str | int) and not isinstance(value, bool)
