"""The shapes every reply must have: the documented error contracts of docs/agents.md and api.md."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from tests.fuzz.client import Reply

PROTOCOL_CODES = {-32700, -32600, -32601, -32602}
SERVER_BAND = range(-32099, -32000 + 1)
INTERNAL_ERROR = -32603
TRANSPORT_STATUSES = {400, 401, 403, 404, 405, 406, 413, 415, 429}
REST_STATUSES = {200, 400, 401, 403, 404, 405, 413, 415, 429}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def assert_no_fault(reply: Reply) -> None:
    """No 5xx, never an HTML page, and any body is one JSON document (or one SSE frame of it)."""
    assert reply.status < 500, f"server fault: {reply.describe()}"
    if reply.status in (202, 204):
        assert reply.text == "", f"{reply.status} must have no body: {reply.describe()}"
        return
    assert "html" not in reply.content_type and not reply.text.lstrip().startswith("<"), \
        f"HTML body: {reply.describe()}"
    assert reply.content_type in ("application/json", "text/event-stream"), \
        f"not JSON: {reply.describe()}"
    assert reply.decoded, f"body is not one JSON document: {reply.describe()}"


def assert_rpc_error(body: Any, reply: Reply, *, request_id: Any = ...) -> dict[str, Any]:
    """`{"jsonrpc": "2.0", "id": ..., "error": {code, message, data: {field}}}`; returns error."""
    assert isinstance(body, dict) and set(body) == {"jsonrpc", "id", "error"}, \
        f"not a JSON-RPC error: {reply.describe()}"
    assert body["jsonrpc"] == "2.0", reply.describe()
    if request_id is not ...:
        assert body["id"] == request_id, f"id {body['id']!r} is not {request_id!r}: " \
                                         f"{reply.describe()}"
    error = body["error"]
    assert isinstance(error, dict), reply.describe()
    code = error.get("code")
    assert isinstance(code, int) and not isinstance(code, bool), reply.describe()
    assert code != INTERNAL_ERROR, f"-32603 is a server fault, never bad input: {reply.describe()}"
    assert code in PROTOCOL_CODES or code in SERVER_BAND, f"code {code}: {reply.describe()}"
    assert isinstance(error.get("message"), str) and error["message"], reply.describe()
    data = error.get("data")
    if reply.status == 429:
        assert isinstance(data, dict) and isinstance(data.get("retry_after"), int), \
            reply.describe()
        assert reply.headers.get("retry-after", "").isdigit(), reply.describe()
        return error
    assert isinstance(data, dict) and isinstance(data.get("field"), str) and data["field"], \
        f"error.data.field must name the member or header at fault: {reply.describe()}"
    if reply.status == 401:
        assert reply.headers.get("www-authenticate", "").lower().startswith("bearer"), \
            f"401 without WWW-Authenticate: Bearer: {reply.describe()}"
    return error


def rpc_status_fits(code: int, status: int) -> bool:
    """Errors of a dispatched request come with 200; transport faults with their 4xx."""
    if status == 200:
        return code not in (-32700,)
    return status in TRANSPORT_STATUSES


def assert_tool_error(result: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """`result.isError` with `error: {code, message, field, fix}` and the message as text."""
    error = result.get("error")
    assert isinstance(error, dict), f"isError without error: {reply.describe()}"
    for member in ("code", "message", "field", "fix"):
        assert isinstance(error.get(member), str) and error[member], \
            f"tool error without {member}: {reply.describe()}"
    content = result.get("content")
    assert isinstance(content, list) and content and content[0].get("type") == "text", \
        reply.describe()
    assert error["message"] in content[0]["text"], f"text block lacks the message: " \
                                                    f"{reply.describe()}"
    return error


_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


def assert_tool_output(output: Any, output_schema: dict[str, Any], reply: Reply) -> None:
    key = json.dumps(output_schema, sort_keys=True)
    if key not in _VALIDATORS:
        _VALIDATORS[key] = jsonschema.Draft202012Validator(output_schema)
    error = jsonschema.exceptions.best_match(_VALIDATORS[key].iter_errors(output))
    if error is not None:
        raise AssertionError(f"reply does not match the tool's outputSchema ({error.message} at "
                             f"{list(error.absolute_path)}): {reply.describe()}")


def assert_mcp_tool_success(result: dict[str, Any], reply: Reply,
                            text_from: str | None = None) -> dict[str, Any]:
    """The output three times: structuredContent, one text block, and top-level fields.

    A tool that declares `text_from` (memory_search) shows that member alone in its text
    block, the shape its clients read there."""
    output = result.get("structuredContent")
    assert isinstance(output, dict), reply.describe()
    assert result.get("isError") is False, reply.describe()
    top = {k: v for k, v in result.items() if k not in ("content", "structuredContent",
                                                         "isError", "_meta")}
    assert top == output, f"top-level fields differ from structuredContent: {reply.describe()}"
    text = result["content"][0]["text"]
    shown = output if text_from is None else output[text_from]
    assert json.loads(text) == shown, f"text block differs from structuredContent: " \
                                      f"{reply.describe()}"
    return output


def assert_rest_error(reply: Reply) -> dict[str, Any]:
    """`{"error": {code, message, field, fix}}`, 429 with retry_after and Retry-After."""
    assert reply.status in REST_STATUSES, f"undocumented status: {reply.describe()}"
    body = reply.body
    assert isinstance(body, dict) and set(body) == {"error"}, f"not the error shape: " \
                                                              f"{reply.describe()}"
    error = body["error"]
    assert isinstance(error, dict), reply.describe()
    assert isinstance(error.get("code"), str) and error["code"], reply.describe()
    assert isinstance(error.get("message"), str) and error["message"], reply.describe()
    if reply.status == 429:
        assert isinstance(error.get("retry_after"), int), reply.describe()
        assert reply.headers.get("retry-after", "").isdigit(), reply.describe()
    elif reply.status != 405:
        assert isinstance(error.get("field"), str) and error["field"], \
            f"error.field must name the argument or header at fault: {reply.describe()}"
    if reply.status == 401:
        assert reply.headers.get("www-authenticate", "").lower().startswith("bearer"), \
            reply.describe()
    return error


def ids_in(value: Any) -> set[str]:
    """Every UUID-looking string in a reply: ids to reuse, or to check for leaks."""
    if isinstance(value, str):
        return {value} if UUID.match(value) else set()
    if isinstance(value, dict):
        return set().union(set(), *(ids_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(set(), *(ids_in(v) for v in value))
    return set()
