"""JSON-RPC envelopes for the fuzzer: what to vary in a message, and how any reply is judged.

Each strategy returns an `Envelope`: the message (or raw body), the headers, and which
members it made invalid (`faults`). The judge holds every reply to the transport rules
of docs/agents.md: a refusal names one of those members (or `body`), a message with no
fault is served, errors of a dispatched request come with 200 and transport faults with
their 4xx.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.client import Reply
from tests.fuzz.invariants import assert_no_fault, assert_rpc_error, assert_tool_error
from tests.fuzz.schema_values import CONTROL, INVISIBLE, ODD, Nested, schema_paths
from tools.registry import TOOLS

SERVED = ("ping", "tools/list")
VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
HOSTILE_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", " ", "\x00", "\ud800", "a\udfffb", "x" * 10_000, *ODD, *INVISIBLE,
                     *CONTROL]),
)
# Any JSON value, nesting a little: what a careless client puts where it should not.
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
              st.floats(allow_nan=False, allow_infinity=False), HOSTILE_TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(HOSTILE_TEXT, inner, max_size=3)),
    max_leaves=6,
)


class Absent:
    """A member left out of the message."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = Absent()


@dataclass
class Envelope:
    message: Any  # a JSON value, or bytes sent as they are
    faults: set[str] = field(default_factory=set)  # members made invalid; empty = well formed
    maybe: set[str] = field(default_factory=set)  # odd but valid: served, or refused by name
    headers: dict[str, Any] = field(default_factory=dict)
    http_method: str = "POST"
    note: str = ""
    tool_fields: set[str] = field(default_factory=set)  # what a tool's refusal may name

    @property
    def value(self) -> Any:
        """The message as the server reads it (raw bodies decoded when they are JSON)."""
        if not isinstance(self.message, bytes):
            return self.message
        try:
            return json.loads(self.message)
        except (ValueError, RecursionError):
            return None

    @property
    def is_request(self) -> bool:
        return isinstance(self.value, dict) and "id" in self.value


def build(**members: Any) -> dict[str, Any]:
    return {name: value for name, value in members.items() if value is not ABSENT}


def valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def judge(reply: Reply, envelope: Envelope) -> Any:
    """Hold one reply to the transport rules; returns the decoded body (None for 202/204)."""
    assert_no_fault(reply)
    fields = envelope.faults | envelope.maybe | {"body"}
    if reply.status in (202, 204):
        assert not envelope.faults or not envelope.is_request, \
            f"a message with faults {envelope.faults} was taken without an answer: " \
            f"{reply.describe()}"
        return None
    body = reply.body
    if isinstance(body, dict) and "error" in body:
        error = assert_rpc_error(body, reply)
        if reply.status == 429:
            return body
        named = error["data"]["field"]
        assert named in fields, (f"the error names {named!r}; the fuzzer changed "
                                 f"{sorted(envelope.faults) or 'nothing'}: {reply.describe()}")
        if reply.status == 200:
            assert error["code"] not in (-32700,), f"a parse error with 200: {reply.describe()}"
            message_id = envelope.value.get("id") if isinstance(envelope.value, dict) else None
            if valid_id(message_id):
                assert body["id"] == message_id, f"error for id {message_id!r} carries " \
                                                 f"{body['id']!r}: {reply.describe()}"
        return body
    assert reply.status == 200, f"status {reply.status} without an error: {reply.describe()}"
    assert isinstance(body, dict) and body.get("jsonrpc") == "2.0" and "result" in body, \
        reply.describe()
    assert body["id"] == envelope.value.get("id"), reply.describe()
    result = body["result"]
    if isinstance(result, dict) and result.get("isError") is True:
        named = assert_tool_error(result, reply)["field"]
        assert named in envelope.tool_fields | envelope.faults or any(
            named.startswith(f"{f}.") or named.startswith(f"{f}[") for f in envelope.tool_fields), \
            f"the tool refusal names {named!r}; the fuzzer changed " \
            f"{sorted(envelope.faults | envelope.tool_fields)}: {reply.describe()}"
        return body
    assert not envelope.faults, (f"a message with faults {sorted(envelope.faults)} was served: "
                                 f"{reply.describe()}")
    return body


# ------------------------------------------------------------------------ ids

@st.composite
def ids(draw) -> Envelope:
    """ping / tools/list with every kind of id, or none (a notification)."""
    value = draw(st.one_of(
        st.just(ABSENT), st.integers(), st.integers(-(2**80), 2**80), HOSTILE_TEXT,
        st.uuids().map(str), st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([None, True, False, [], {}, [1], {"id": 1}, 1.0, -0.0, 1e300]),
    ))
    method = draw(st.sampled_from(SERVED))
    message = build(jsonrpc="2.0", id=value, method=method)
    faults = set() if value is ABSENT or valid_id(value) else {"id"}
    return Envelope(message, faults, maybe={"id"}, note=f"id={value!r}")


# -------------------------------------------------------------------- methods

NEAR_METHODS = ["Ping", "PING", "ping ", " ping", "tools/List", "tools//list", "tools/list/",
                "tools/call ", "tools.list", "rpc.discover", "server/discover", "resources/list",
                "prompts/list", "notifications/initialized", "completion/complete",
                "logging/setLevel", "initialize\x00", "ping\x00", "\u0440ing", "tools/\u0131ist"]


@st.composite
def methods(draw) -> Envelope:
    value = draw(st.one_of(st.sampled_from(NEAR_METHODS), HOSTILE_TEXT, st.just(ABSENT),
                           st.sampled_from([None, 1, True, [], {}, ["ping"], {"name": "ping"}])))
    request = draw(st.booleans())
    message = build(jsonrpc="2.0", id=7 if request else ABSENT, method=value)
    faults = set() if isinstance(value, str) and value in SERVED else {"method"}
    return Envelope(message, faults, note=f"method={value!r}, request={request}")


# --------------------------------------------------------------------- params

@st.composite
def params(draw) -> Envelope:
    """The params of every served method: wrong shapes, unknown tools, bad client info."""
    method = draw(st.sampled_from(["ping", "tools/list", "tools/call", "initialize"]))
    faults: set[str] = set()
    shape = draw(st.sampled_from(["absent", "null", "not_object", "object"]))
    if shape == "not_object":
        value = draw(st.one_of(st.lists(JSON_VALUES, max_size=3), HOSTILE_TEXT, st.integers(),
                               st.booleans()))
        faults.add("params")
    elif shape == "object":
        value = draw(st.dictionaries(st.sampled_from(["_meta", "cursor", "extra", "x"]),
                                     JSON_VALUES, max_size=2))
    else:
        value = ABSENT if shape == "absent" else None
    tool_fields: set[str] = set()
    if method == "tools/call" and shape != "not_object":
        value = dict(value) if isinstance(value, dict) else {}
        name = draw(st.one_of(st.sampled_from(sorted(TOOLS)), HOSTILE_TEXT, st.just(ABSENT),
                              st.sampled_from([None, 1, [], {}, ["query_memory"]])))
        arguments = draw(st.one_of(
            st.just(ABSENT), st.none(),
            st.fixed_dictionaries({"scope": st.sampled_from(["shared", "solo"])},
                                  optional={"query": HOSTILE_TEXT, "digest": st.booleans(),
                                            "top_k": st.integers(-5, 200)}),
            st.one_of(st.lists(JSON_VALUES, max_size=2), HOSTILE_TEXT, st.integers(),
                      st.booleans()),
        ))
        value.update(build(name=name, arguments=arguments))
        if not (isinstance(name, str) and name in TOOLS):
            faults.add("params.name")
        else:  # the tool may name any of its own fields, and any argument sent to it
            tool_fields = set(schema_paths(TOOLS[name].input_schema()))
            tool_fields |= set(arguments) if isinstance(arguments, dict) else set()
        if not (arguments is ABSENT or arguments is None or isinstance(arguments, dict)):
            faults.add("params.arguments")
    if method == "initialize" and shape != "not_object":
        value = dict(value) if isinstance(value, dict) else {}
        version = draw(st.one_of(st.sampled_from(VERSIONS), st.sampled_from(
            ["2024-11-05", "2026-07-28", "1.0", ""]), HOSTILE_TEXT, st.just(ABSENT),
            st.sampled_from([None, 20250618, [], {}])))
        info = draw(st.one_of(
            st.just(ABSENT), st.none(), st.sampled_from([[], "client", 3]),
            st.fixed_dictionaries({}, optional={
                "name": st.one_of(HOSTILE_TEXT, st.sampled_from([None, 1, [], {}])),
                "version": st.one_of(HOSTILE_TEXT, st.sampled_from([None, 1.5, []]))}),
        ))
        value.update(build(protocolVersion=version, clientInfo=info, capabilities={}))
        if not isinstance(version, str):
            faults.add("params.protocolVersion")
        if info is not ABSENT and info is not None:
            if not isinstance(info, dict):
                faults.add("params.clientInfo")
            else:
                for member in ("name", "version"):
                    if member in info and not _storable(info[member]):
                        faults.add(f"params.clientInfo.{member}")
    message = build(jsonrpc="2.0", id=draw(st.integers(1, 10**6)), method=method, params=value)
    return Envelope(message, faults, note=f"{method} params={value!r}"[:300],
                    tool_fields=tool_fields)


def _storable(value: Any) -> bool:
    """A string the server can keep: no NUL, no lone surrogate (others may be refused too)."""
    return isinstance(value, str) and "\x00" not in value and not any(
        0xD800 <= ord(c) <= 0xDFFF for c in value)


# ---------------------------------------------------------------------- nesting

@st.composite
def nesting(draw) -> Envelope:
    """A deep array or object at one member; too deep for any parser to be asked to follow."""
    depth = draw(st.sampled_from([1, 8, 30, 60, 63, 64, 65, 100, 1000, 5000, 50_000, 250_000]))
    where = draw(st.sampled_from(["body", "id", "method", "params", "params.arguments",
                                  "arguments.query", "arguments.scope"]))
    deep = Nested(depth)
    message: Any
    if where == "body":
        message = deep
    elif where in ("id", "method", "params"):
        message = {"jsonrpc": "2.0", "id": 3, "method": "ping", where: deep}
    elif where == "params.arguments":
        message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "query_memory", "arguments": deep}}
    else:
        member = where.split(".")[1]
        arguments = {"scope": "shared", "query": "nested", member: deep}
        message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "query_memory", "arguments": arguments}}
    fault = where.removeprefix("arguments.")  # a tool names its arguments without a prefix
    return Envelope(message, {fault}, note=f"{depth} levels at {where}")


# ----------------------------------------------------------------------- bodies

PING = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'


@st.composite
def bodies(draw) -> Envelope:
    """Bytes that are not one well-formed JSON-RPC message, and a few that are, oddly written."""
    choice = draw(st.sampled_from([
        "binary", "bad_utf8", "bom", "utf16", "truncated", "trailing", "scalar", "nan",
        "duplicate_keys", "comment", "single_quotes", "whitespace", "empty", "lone_surrogate",
        "big_number", "too_large",
    ]))
    body: bytes
    faults = {"body"}
    if choice == "binary":
        body = draw(st.binary(max_size=200))
    elif choice == "bad_utf8":
        body = PING[:-1] + b',"x":"\xff\xfe\xc3"}'
    elif choice == "bom":  # RFC 8259: a parser MAY ignore a byte order mark
        body = b"\xef\xbb\xbf" + PING
        faults = set()
    elif choice == "utf16":  # not UTF-8, so not JSON on the wire; Python's parser reads it
        body = PING.decode().encode("utf-16")
        faults = set()
    elif choice == "truncated":
        body = PING[: draw(st.integers(0, len(PING) - 1))]
    elif choice == "trailing":
        body = PING + draw(st.sampled_from([b"x", b"{}", b"\x00", b" []", b"\n\n{"]))
    elif choice == "scalar":
        body = draw(st.sampled_from([b"1", b"null", b'"ping"', b"true", b"-0", b"1e999"]))
    elif choice == "nan":
        body = draw(st.sampled_from([
            b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":Infinity}}',
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"query_memory",'
            b'"arguments":{"scope":"shared","query":"q","top_k":-Infinity}}}']))
    elif choice == "duplicate_keys":  # the last one wins in most parsers; either way, no 5xx
        body = b'{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/list","method":"ping"}'
        faults = set()
    elif choice == "comment":
        body = b'{"jsonrpc":"2.0", /* c */ "id":5,"method":"ping"}'
    elif choice == "single_quotes":
        body = b"{'jsonrpc':'2.0','id':5,'method':'ping'}"
    elif choice == "whitespace":
        body = b" \n\t\r "
    elif choice == "empty":
        body = b""
    elif choice == "lone_surrogate":
        body = b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}'
        faults = set()  # a string id, odd but valid: echoed or refused as the id
    elif choice == "big_number":
        body = b'{"jsonrpc":"2.0","id":' + b"9" * draw(st.sampled_from([20, 400, 5000])) + \
            b',"method":"ping"}'
        faults = set()
    else:
        body = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"' + \
            b"x" * (1024 * 1024) + b'"}}'
    return Envelope(body, faults, maybe={"id", "body"}, note=choice)


# ---------------------------------------------------------------------- headers

OUTSIDER_KEY = "<the outsider's key>"  # placeholders the test replaces with real values
OUTSIDER_SESSION = "<the outsider's session>"
OWN_KEY_WRONG_SECRET = "<the owner's key prefix with another secret>"
HEADER_TEXT = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
    .map(str.strip),
    st.binary(max_size=20).map(lambda b: bytes(c | 0x80 for c in b)),  # obs-text bytes
    st.sampled_from(["", "x" * 8000, "caf\u00e9".encode(), "\u2603".encode(), "a\tb"]),
)
# (header, value, outcome): "ok" must be served, a header name must be refused naming that
# header, "either" may be served or refused naming the header.
HEADER_CASES = st.one_of(
    st.sampled_from([
        ("Accept", "application/json", "ok"), ("Accept", "text/event-stream", "ok"),
        ("Accept", "*/*", "ok"), ("Accept", "application/*", "ok"), ("Accept", "", "ok"),
        ("Accept", "text/html", "Accept"), ("Accept", "image/png", "Accept"),
        ("Accept", "application/json;q=0", "Accept"),
        ("Accept", "text/event-stream;q=0.9, application/json;q=0.1", "ok"),
        ("Accept", "application/json;q=abc", "either"),
        ("Content-Type", "application/json; charset=utf-8", "ok"),
        ("Content-Type", "text/plain", "Content-Type"), ("Content-Type", "", "Content-Type"),
        ("Content-Type", "application/x-www-form-urlencoded", "Content-Type"),
        ("Content-Type", "multipart/form-data; boundary=x", "Content-Type"),
        ("Content-Type", "APPLICATION/JSON", "either"),
        ("Content-Type", "application/json-patch+json", "Content-Type"),
        ("MCP-Protocol-Version", "2025-06-18", "ok"), ("MCP-Protocol-Version", "", "ok"),
        ("MCP-Protocol-Version", "2025-03-26", "MCP-Protocol-Version"),
        ("MCP-Protocol-Version", "2025-11-25", "MCP-Protocol-Version"),
        # 2026-07-28 is served without a session, from `_meta`, which a 2025 ping lacks.
        ("MCP-Protocol-Version", "2026-07-28", "params._meta"),
        ("MCP-Protocol-Version", "2024-11-05", "MCP-Protocol-Version"),
        ("Mcp-Session-Id", "", "Mcp-Session-Id"),
        ("Mcp-Session-Id", OUTSIDER_SESSION, "Mcp-Session-Id"),
        ("Origin", "http://localhost:3000", "ok"), ("Origin", "http://127.0.0.1", "ok"),
        ("Origin", "http://[::1]:8080", "ok"), ("Origin", "null", "Origin"),
        ("Origin", "http://evil.example", "Origin"), ("Origin", "file://", "Origin"),
        ("Origin", "http://localhost.evil.example", "Origin"),
        ("Origin", "http://evil.example@localhost", "Origin"),
        ("Authorization", "", "Authorization"), ("Authorization", "Bearer", "Authorization"),
        ("Authorization", "Basic Zm9vOmJhcg==", "Authorization"),
        ("Authorization", "Bearer em_000000000000_" + "A" * 43, "Authorization"),
        ("Authorization", OWN_KEY_WRONG_SECRET, "Authorization"),
        # Another tenant's key with this session: the session is not theirs.
        ("Authorization", OUTSIDER_KEY, "Mcp-Session-Id"),
    ]),
    st.tuples(st.sampled_from(["Accept", "MCP-Protocol-Version", "Mcp-Session-Id", "Origin",
                               "Authorization", "Content-Type"]), HEADER_TEXT,
              st.just("either")),
)


@st.composite
def headers(draw) -> Envelope:
    name, value, outcome = draw(HEADER_CASES)
    http_method = draw(st.sampled_from(["POST"] * 6 + ["GET", "PUT", "PATCH", "OPTIONS",
                                                       "DELETE"]))
    message = {"jsonrpc": "2.0", "id": draw(st.integers(1, 1000)), "method": "ping"}
    envelope = Envelope(message, headers={name: value}, http_method=http_method,
                        note=f"{http_method} with {name}: {value!r}"[:200])
    if http_method == "DELETE":
        # Only ever a session that is not the test's own (ending it would end the test).
        envelope.headers = {"Mcp-Session-Id": draw(st.sampled_from(
            ["no-such-session", OUTSIDER_SESSION, "x" * 300]))}
        envelope.faults = {"Mcp-Session-Id"}
    elif outcome == "either":
        envelope.maybe = {name}
    elif outcome != "ok":
        envelope.faults = {outcome}
    if http_method not in ("POST", "DELETE"):
        envelope.maybe |= envelope.faults | {"method"}
        envelope.faults = {"method"}
    return envelope


# ----------------------------------------------------------------------- batches


@st.composite
def batch_items(draw, counter) -> tuple[Any, str]:
    """One element of a batch and what it is: request, notification or invalid."""
    kind = draw(st.sampled_from(["request"] * 4 + ["notification", "invalid", "call",
                                                   "initialize"]))
    if kind == "request":
        return {"jsonrpc": "2.0", "id": draw(st.one_of(st.integers(0, 5), st.just(next(counter)),
                                                      st.text(max_size=3))),
                "method": draw(st.sampled_from(SERVED))}, "request"
    if kind == "call":
        return {"jsonrpc": "2.0", "id": next(counter), "method": "tools/call",
                "params": {"name": draw(st.sampled_from(["query_memory", "get_audit_log",
                                                         "write_episode"])),
                           "arguments": draw(st.sampled_from([
                               {"scope": "shared", "query": "seed"},
                               {"scope": "shared", "digest": True, "top_k": 3},
                               {"scope": "solo", "limit": 2},
                               {"scope": "shared", "assume_new": True,
                                "entities": [{"name": "Batch writer", "type": "tool"},
                                             {"name": "Batch target", "type": "thing"}],
                                "facts": [{"source": "Batch writer", "target": "Batch target",
                                           "relation_type": "touches",
                                           "fact": "Batch writer touches the batch target",
                                           "confidence": "extracted"}]}]))}}, "request"
    if kind == "notification":
        return {"jsonrpc": "2.0", "method": draw(st.sampled_from(
            ["notifications/initialized", "notifications/cancelled", "ping"]))}, "notification"
    if kind == "initialize":
        return {"jsonrpc": "2.0", "id": next(counter), "method": "initialize",
                "params": {"protocolVersion": "2025-03-26"}}, "invalid"
    return draw(st.sampled_from([
        1, "ping", None, [], {}, {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, {"jsonrpc": "2.0", "id": 2},
        {"jsonrpc": "2.0", "id": 3, "result": {}}, {"jsonrpc": "2.0", "id": 4, "error": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": [1]},
        {"jsonrpc": "2.0", "id": 6, "method": "no/such"}])), "invalid"
