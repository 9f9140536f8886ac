"""A tool call over MCP or REST, judged against the contract, with the ledger kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fuzz.client import Mcp, Reply, Rest
from tests.fuzz.invariants import (
    assert_mcp_tool_success,
    assert_no_fault,
    assert_rest_error,
    assert_rpc_error,
    assert_tool_error,
    assert_tool_output,
    ids_in,
)
from tests.fuzz.schema_values import (
    Mutation,
    field_matches,
    rendered_paths,
    schema_paths,
    shape,
)
from tests.fuzz.server import FuzzServer
from tools.contract import Tool

# What a refusal of arguments that are not an object names, per transport.
WHOLE = {"mcp": "params.arguments", "rest": "body"}


@dataclass
class Outcome:
    reply: Reply
    accepted: bool
    output: dict[str, Any] | None = None
    field: str | None = None  # what a refusal named; None for 429


def call_tool(fuzz: FuzzServer, client: Mcp | Rest, tool: Tool, arguments: Any,
              judge: Callable[[Outcome], None] = lambda outcome: None) -> Outcome:
    """Send one call and judge it (`judge` adds the caller's own assertions on the outcome)."""
    if isinstance(client, Mcp):
        message_id, reply = client.call_tool(tool.name, arguments)
    else:
        reply = client.call_tool(tool.name, arguments)
    fuzz.observe(reply)
    with fuzz.judging(f"{tool.name} with {shown(arguments)}"):
        if isinstance(client, Mcp):
            outcome = _mcp_outcome(reply, message_id, arguments, tool)
        else:
            outcome = _rest_outcome(reply)
        _account(fuzz, tool, arguments, outcome)
        judge(outcome)
    return outcome


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=repr)
    return text if len(text) < 1500 else text[:1500] + f"... ({len(text)} chars)"


def _account(fuzz: FuzzServer, tool: Tool, arguments: Any, outcome: Outcome) -> None:
    reply = outcome.reply
    fuzz.stats["accepted" if outcome.accepted else "refused"] += 1
    if outcome.accepted:
        # MCP reads `arguments: null` as no arguments, which a tool without required ones
        # (get_usage) accepts.
        no_arguments = arguments is None and not tool.input_schema().get("required")
        assert isinstance(arguments, dict) or no_arguments, \
            f"accepted arguments that are not an object: {reply.describe()}"
        assert_tool_output(outcome.output, tool.output_schema(), reply)
        leaked = ids_in(outcome.output) & fuzz.foreign
        assert not leaked, f"another account's ids {leaked} in a reply: {reply.describe()}"
        fuzz.ledger.credit(fuzz.owner.id, tool.name, outcome.output)
        fuzz.remember(ids_in(outcome.output))
    return outcome


def _mcp_outcome(reply: Reply, message_id: int, arguments: Any, tool: Tool) -> Outcome:
    assert_no_fault(reply)
    body = reply.body
    if reply.status != 200:
        error = assert_rpc_error(body, reply)
        if reply.status == 429:
            return Outcome(reply, False)
        # The body itself refused (too large, too deep, not JSON): nothing reached the tool.
        assert reply.status in (400, 413) and error["data"]["field"] == "body", \
            f"a tool call refused at the transport: {reply.describe()}"
        return Outcome(reply, False, field="body")
    if isinstance(body, dict) and "error" in body:
        error = assert_rpc_error(body, reply, request_id=message_id)
        assert not isinstance(arguments, dict), \
            f"bad arguments must be a tool result with isError, not a protocol error: " \
            f"{reply.describe()}"
        assert (error["code"], error["data"]["field"]) == (-32602, "params.arguments"), \
            reply.describe()
        return Outcome(reply, False, field="params.arguments")
    assert isinstance(body, dict) and set(body) == {"jsonrpc", "id", "result"}, reply.describe()
    assert body["id"] == message_id, reply.describe()
    result = body["result"]
    assert isinstance(result, dict) and isinstance(result.get("isError"), bool), reply.describe()
    if result["isError"]:
        return Outcome(reply, False, field=assert_tool_error(result, reply)["field"])
    return Outcome(reply, True, output=assert_mcp_tool_success(result, reply,
                                                                text_from=tool.text_from))


def _rest_outcome(reply: Reply) -> Outcome:
    assert_no_fault(reply)
    if reply.status == 200:
        assert isinstance(reply.body, dict) and "error" not in reply.body, reply.describe()
        return Outcome(reply, True, output=reply.body)
    error = assert_rest_error(reply)
    assert reply.status in (400, 404, 413, 429), f"a tool call answered {reply.describe()}"
    return Outcome(reply, False, field=error.get("field") if reply.status != 429 else None)


def assert_names_field(outcome: Outcome, *, arguments: Any, schema: dict[str, Any],
                       transport: str, mutation: Mutation | None, base_accepted: bool) -> None:
    """A refusal names the field the fuzzer changed; or, when the unmutated base was itself
    refused (or the change cannot be blamed alone), some field the arguments or schema have."""
    field = outcome.field
    if field is None:  # 429: a correct answer that names nothing
        return
    shown = f"{outcome.reply.describe()}\nmutation: {mutation.description if mutation else None}"
    assert isinstance(field, str) and field, f"refusal names no field: {shown}"
    if not isinstance(arguments, dict):
        allowed = {WHOLE[transport], "body"}
        if arguments is None:  # null may stand for "no arguments": then a missing one is named
            allowed |= set(schema_paths(schema))
        assert field in allowed, f"arguments that are not an object, refused as {field!r}: " \
                                 f"{shown}"
        return
    if mutation is not None and mutation.body_level and field == "body":
        return
    if mutation is not None and mutation.strict and base_accepted and mutation.acceptable:
        assert any(field_matches(field, path) for path in mutation.acceptable), (
            f"the refusal names {field!r}, but the fuzzer changed {mutation.acceptable[0]!r} "
            f"(acceptable: {mutation.acceptable[:8]}): {shown}")
        return
    known = {shape(path) for path in rendered_paths(arguments) if path}
    known |= set(schema_paths(schema)) | {"body"}
    assert any(field_matches(shape(field), path) for path in known), \
        f"the refusal names {field!r}, which is neither in the arguments nor the schema: {shown}"
