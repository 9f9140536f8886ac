"""JSON-RPC envelopes and the HTTP around them, one test per class of fault.

Ids, methods, params, batches, nesting, headers and raw bodies: each is varied alone
on an otherwise well-formed request, and every reply is held to the transport rules
(tests/fuzz/envelopes.py judge): no 5xx, no -32603, never HTML, a refusal names the
member or header that was changed (or `body`), and a well-formed message is served.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from django.conf import settings
from hypothesis import given, note
from hypothesis import strategies as st

from tests.fuzz import envelopes
from tests.fuzz.client import Mcp, encode, reply_of
from tests.fuzz.conftest import FUZZ
from tests.fuzz.envelopes import Envelope, judge
from tests.fuzz.invariants import assert_no_fault, assert_rpc_error, ids_in


@pytest.fixture
def outsider_session(fuzz):
    client = Mcp(fuzz.base_url, fuzz.outsider.key)
    yield client.session_id
    client.close()


def send(fuzz, mcp: Mcp, envelope: Envelope, **replace: str):
    """Send an envelope on the test's session; placeholders in its headers become real values."""
    headers = {**mcp.headers()}
    for name, value in envelope.headers.items():
        headers[name] = replace.get(value, value) if isinstance(value, str) else value
    content = envelope.message if isinstance(envelope.message, bytes) \
        else encode(envelope.message)
    response = mcp.http.request(envelope.http_method, "/mcp", content=content, headers=headers)
    reply = reply_of(response)
    fuzz.observe(reply)
    return reply


def credit_tool_results(fuzz, message, body) -> None:
    """A served tools/call inside any envelope counts in the ledger like any other."""
    if not (isinstance(message, dict) and message.get("method") == "tools/call"
            and isinstance(body, dict) and isinstance(body.get("result"), dict)):
        return
    result = body["result"]
    if result.get("isError") is False:
        fuzz.ledger.credit(fuzz.owner.id, message["params"]["name"], result["structuredContent"])
        assert not ids_in(result) & fuzz.foreign, f"another account's ids in {body}"


def run_class(fuzz, mcp, strategy, **replace):
    @FUZZ
    @given(envelope=strategy)
    def run(envelope: Envelope):
        fuzz.stats["cases"] += 1
        note(f"envelope: {envelope.note}")
        reply = send(fuzz, mcp, envelope, **replace)
        with fuzz.judging(envelope.note):
            body = judge(reply, envelope)
            credit_tool_results(fuzz, envelope.message, body)

    run()


def test_request_ids_are_echoed_or_refused_as_the_id(fuzz, mcp):
    run_class(fuzz, mcp, envelopes.ids())


def test_unknown_and_malformed_methods_are_refused_as_the_method(fuzz, mcp):
    run_class(fuzz, mcp, envelopes.methods())


def test_params_of_every_method_are_refused_by_their_member(fuzz, mcp):
    run_class(fuzz, mcp, envelopes.params())


def test_deep_nesting_is_refused_as_the_body_or_its_member(fuzz, mcp):
    run_class(fuzz, mcp, envelopes.nesting())


def test_bodies_that_are_not_one_json_message_are_refused_as_the_body(fuzz, mcp):
    run_class(fuzz, mcp, envelopes.bodies())


def test_transport_headers_and_http_methods_are_refused_by_name(fuzz, mcp, outsider_session):
    prefix = fuzz.owner.key[:16]
    run_class(fuzz, mcp, envelopes.headers(), **{
        envelopes.OUTSIDER_KEY: f"Bearer {fuzz.outsider.key}",
        envelopes.OUTSIDER_SESSION: outsider_session,
        envelopes.OWN_KEY_WRONG_SECRET: f"Bearer {prefix}{'B' * 43}",
    })


@pytest.fixture
def batching(fuzz):
    """A session at 2025-03-26, the one revision that has JSON-RPC batches."""
    client = Mcp(fuzz.base_url, fuzz.owner.key, version="2025-03-26")
    yield client
    client.close()


def test_batches_answer_every_request_once_and_refuse_what_they_cannot_hold(
        fuzz, mcp, batching):
    bound = settings.MCP_MAX_BATCH_MESSAGES
    counter = itertools.count(1000)

    @FUZZ
    @given(data=st.data(), size=st.one_of(st.integers(0, 8), st.sampled_from(
        [bound, bound + 1, bound * 3])), later_version=st.booleans())
    def run(data, size, later_version):
        fuzz.stats["cases"] += 1
        drawn = [data.draw(envelopes.batch_items(counter)) for _ in range(min(size, 12))]
        items = [drawn[i % len(drawn)] for i in range(size)] if drawn else []
        client = mcp if later_version else batching
        messages = [item for item, _ in items]
        note(f"{len(messages)} messages on {client.version}: {messages[:12]}")
        reply = client.post(messages)
        fuzz.observe(reply)
        with fuzz.judging(f"a batch of {len(messages)}"):
            judge_batch(fuzz, reply, items, client.version, bound)

    run()


def judge_batch(fuzz, reply, items, version, bound) -> None:
    assert_no_fault(reply)
    refused_whole = not items or len(items) > bound or version != "2025-03-26"
    if refused_whole:
        assert reply.status in (400, 429), f"a batch of {len(items)} on {version}: " \
                                           f"{reply.describe()}"
        error = assert_rpc_error(reply.body, reply)
        assert reply.status == 429 or error["data"]["field"] == "body", reply.describe()
        return
    if reply.status == 429:
        assert_rpc_error(reply.body, reply)
        return
    answered = [item for item, kind in items if kind != "notification"]
    if not answered:
        assert reply.status == 202, f"a batch of notifications: {reply.describe()}"
        return
    assert reply.status == 200 and isinstance(reply.body, list), reply.describe()
    assert len(reply.body) == len(answered), (f"{len(answered)} requests (and refusals) but "
                                              f"{len(reply.body)} answers: {reply.describe()}")
    for answer in reply.body:
        assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", reply.describe()
        if "error" in answer:
            assert_rpc_error(answer, reply)
        else:
            assert set(answer) == {"jsonrpc", "id", "result"}, reply.describe()
    wanted = Counter(repr(item["id"]) for item, kind in items if kind == "request")
    got = Counter(repr(answer.get("id")) for answer in reply.body)
    assert not wanted - got, f"requests {dict(wanted)} answered {dict(got)}: {reply.describe()}"
    calls = {item["id"]: item for item, kind in items
             if kind == "request" and item["method"] == "tools/call"}
    for answer in reply.body:
        if answer.get("id") in calls:
            credit_tool_results(fuzz, calls[answer["id"]], answer)
