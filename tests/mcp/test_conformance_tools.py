"""The conformance suite's diagnostic tools and fixtures (tests/conformance_app):
absent unless that test-only app is installed. The SEP-2575 diagnostics are served to
2026-07-28 requests only, doing what the revision defines: -32021 for an undeclared
capability, input asked for inside an input_required result, log messages only at the level
a request asks for. The tools-call-* fixtures are served at both eras."""

from __future__ import annotations

import base64
import json

import pytest
from mcp_types import _v2026_07_28 as wire

from tests.conformance_app import tools as conformance
from tests.conformance_app.tools import TOOLS as DIAGNOSTICS
from tests.mcp.test_stateless import META, stateless
from tools.registry import TOOLS

FIXTURES_FOR_SESSIONS = ["test_simple_text", "test_image_content", "test_audio_content",
                         "test_embedded_resource", "test_multiple_content_types",
                         "test_error_handling", "test_tool_with_progress"]
SAMPLING = {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
ELICITATION = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


@pytest.fixture
def on():
    """What installing tests/conformance_app does (its AppConfig.ready()), for one test."""
    conformance.install()
    yield
    conformance.uninstall()


def names(response) -> list[str]:
    return [tool["name"] for tool in response.json()["result"]["tools"]]


def messages(response) -> list[dict]:
    """The messages of a reply: one JSON body, or each event of a stream."""
    if response["Content-Type"] == "application/json":
        return [response.json()]
    assert response["Content-Type"].startswith("text/event-stream")
    return [json.loads(line.removeprefix("data: "))
            for line in response.content.decode().splitlines() if line.startswith("data: ")]


def test_off_by_default_nothing_is_listed_or_callable(mcp_for, alice):
    mcp = mcp_for(alice, initialize=False)
    assert names(stateless(mcp, "tools/list")) == list(TOOLS)
    refused = stateless(mcp, "tools/call", {"name": "test_logging_tool", "arguments": {}})
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, -32602)
    assert "logging" not in stateless(mcp, "server/discover").json()["result"]["capabilities"]


def test_on_all_are_listed_at_2026_and_a_session_gets_only_the_tools_call_fixtures(
        mcp_for, alice, on):
    listed = names(stateless(mcp_for(alice, initialize=False), "tools/list"))
    assert listed == [*TOOLS, *DIAGNOSTICS]
    session = mcp_for(alice)
    assert names(session.request("tools/list")) == [*TOOLS, *FIXTURES_FOR_SESSIONS]
    assert session.call("test_logging_tool", {})["error"]["code"] == -32602
    discovered = stateless(mcp_for(alice, initialize=False), "server/discover").json()["result"]
    assert discovered["capabilities"]["logging"] == {}


@pytest.mark.parametrize("name, kinds", [
    ("test_simple_text", ["text"]), ("test_image_content", ["image"]),
    ("test_audio_content", ["audio"]), ("test_embedded_resource", ["resource"]),
    ("test_multiple_content_types", ["text", "image", "resource"])])
def test_the_content_fixtures_return_valid_blocks_at_both_eras(mcp_for, alice, on, name, kinds):
    for result in (mcp_for(alice).call(name, {})["result"],
                   stateless(mcp_for(alice, initialize=False), "tools/call",
                             {"name": name, "arguments": {}}).json()["result"]):
        wire.CallToolResult.model_validate({**result, "resultType": "complete"})
        assert [block["type"] for block in result["content"]] == kinds
        assert result["isError"] is False
    image = next((b for b in result["content"] if b["type"] in ("image", "audio")), None)
    if image:  # the bytes are a real file of the type named
        data = base64.b64decode(image["data"])
        assert data.startswith(b"\x89PNG" if image["type"] == "image" else b"RIFF")


def test_the_error_fixture_fails_as_a_result(mcp_for, alice, on):
    result = mcp_for(alice).call("test_error_handling", {})["result"]
    assert result["isError"] is True and result["content"][0]["text"]


def test_progress_goes_before_the_result_only_when_asked(mcp_for, alice, on):
    session = mcp_for(alice)
    plain = session.request("tools/call", {"name": "test_tool_with_progress", "arguments": {}})
    assert plain["Content-Type"] == "application/json"
    asked = session.request("tools/call", {"name": "test_tool_with_progress", "arguments": {},
                                           "_meta": {"progressToken": "p-1"}})
    frames = messages(asked)
    assert [f["params"]["progress"] for f in frames[:-1]] == [0, 50, 100]
    assert {f["params"]["progressToken"] for f in frames[:-1]} == {"p-1"}
    for frame in frames[:-1]:
        wire.ProgressNotification.model_validate(frame)
    assert frames[-1]["result"]["isError"] is False


def test_an_undeclared_capability_is_400_naming_it(mcp_for, alice, on):
    response = stateless(mcp_for(alice, initialize=False), "tools/call",
                         {"name": "test_missing_capability", "arguments": {}})
    assert response.status_code == 400
    body = response.json()
    wire.MissingRequiredClientCapabilityError.model_validate(body)
    assert (body["id"], body["error"]["code"]) == (1, -32021)
    assert body["error"]["data"]["requiredCapabilities"] == {"sampling": {}}


def test_sampling_is_asked_inside_the_result_then_used(mcp_for, alice, on):
    mcp = mcp_for(alice, initialize=False)
    call = {"name": "test_missing_capability", "arguments": {}}
    asked = stateless(mcp, "tools/call", call, meta=SAMPLING).json()["result"]
    wire.InputRequiredResult.model_validate(asked)
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"]["sample"]["method"] == "sampling/createMessage"
    answer = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Hello"}}
    done = stateless(mcp, "tools/call", {**call, "inputResponses": {"sample": answer}},
                     meta=SAMPLING).json()["result"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "The client's model said: Hello"


def test_elicitation_is_asked_again_when_the_answer_is_missing_and_refused_when_malformed(
        mcp_for, alice, on):
    mcp = mcp_for(alice, initialize=False)
    call = {"name": "test_streaming_elicitation", "arguments": {}}
    url_only = {**META, "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {"url": {}}}}
    refused = stateless(mcp, "tools/call", call, meta=url_only)
    assert refused.json()["error"]["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}
    response = stateless(mcp, "tools/call", call, meta=ELICITATION)
    assert response.status_code == 200
    first = response.json()
    assert "method" not in first  # a result, not a request of the server's own
    wire.InputRequiredResult.model_validate(first["result"])
    assert first["result"]["inputRequests"]["confirm"]["method"] == "elicitation/create"
    again = stateless(mcp, "tools/call", {**call, "inputResponses": {"other": {}}},
                      meta=ELICITATION).json()["result"]
    assert again["resultType"] == "input_required"
    for responses, field in [(12345, "params.inputResponses"),
                             ({"confirm": {"action": "maybe"}}, "params.inputResponses.confirm"
                              ".action")]:
        bad = stateless(mcp, "tools/call", {**call, "inputResponses": responses},
                        meta=ELICITATION)
        assert (bad.status_code, bad.json()["error"]["data"]["field"]) == (400, field)
    done = stateless(mcp, "tools/call", {**call, "inputResponses": {"confirm": {
        "action": "accept", "content": {"confirmed": True}}}}, meta=ELICITATION).json()["result"]
    assert done["content"][0]["text"] == "The user answered confirmed=true."


def test_no_log_message_without_a_level_and_only_those_at_or_above_it(mcp_for, alice, on):
    mcp = mcp_for(alice, initialize=False)
    call = {"name": "test_logging_tool", "arguments": {}}
    silent = stateless(mcp, "tools/call", call)
    assert silent["Content-Type"] == "application/json"
    assert silent.json()["result"]["isError"] is False
    levels = {}
    for level in ("debug", "info", "warning"):
        frames = messages(stateless(mcp, "tools/call", call, meta={
            **META, "io.modelcontextprotocol/logLevel": level}))
        assert "result" in frames[-1]
        for frame in frames[:-1]:
            wire.LoggingMessageNotification.model_validate(frame)
        levels[level] = [f["params"]["level"] for f in frames
                         if f.get("method") == "notifications/message"]
    assert levels == {"debug": ["debug", "info"], "info": ["info"], "warning": []}


def test_an_unknown_log_level_is_400_naming_it(mcp_for, alice):
    response = stateless(mcp_for(alice, initialize=False), "tools/list",
                         meta={**META, "io.modelcontextprotocol/logLevel": "loud"})
    assert response.status_code == 400
    assert response.json()["error"]["data"]["field"] == (
        "params._meta.io.modelcontextprotocol/logLevel")


EVERYTHING = {**META, "io.modelcontextprotocol/clientCapabilities": {
    "sampling": {}, "elicitation": {}, "roots": {}}}


def call_tool(mcp, name: str, meta: dict = EVERYTHING, **params):
    return stateless(mcp, "tools/call", {"name": name, "arguments": {}, **params}, meta=meta)


def accept(**content) -> dict:
    return {"action": "accept", "content": content}


def test_a_multi_round_call_carries_its_answers_in_a_signed_state(mcp_for, alice, on):
    mcp = mcp_for(alice, initialize=False)
    name = "test_input_required_result_multi_round"
    first = call_tool(mcp, name).json()["result"]
    wire.InputRequiredResult.model_validate(first)
    assert list(first["inputRequests"]) == ["step1"]
    second = call_tool(mcp, name, inputResponses={"step1": accept(name="Alice")},
                       requestState=first["requestState"]).json()["result"]
    assert list(second["inputRequests"]) == ["step2"]
    assert second["requestState"] != first["requestState"]
    done = call_tool(mcp, name, inputResponses={"step2": accept(color="blue")},
                     requestState=second["requestState"]).json()["result"]
    assert done["content"][0]["text"] == "Alice's favourite colour is blue."


@pytest.mark.parametrize("state", ["changed", "other tool", "other key"])
def test_a_changed_or_foreign_request_state_is_refused(mcp_for, alice, bob, on, state):
    mcp = mcp_for(alice, initialize=False)
    name = "test_input_required_result_tampered_state"
    issued = call_tool(mcp, name).json()["result"]["requestState"]
    if state == "changed":
        sent = issued + "-TAMPERED"
    elif state == "other tool":
        sent = call_tool(mcp, "test_input_required_result_request_state").json()[
            "result"]["requestState"]
    else:
        sent = call_tool(mcp_for(bob, initialize=False), name).json()["result"]["requestState"]
    refused = call_tool(mcp, name, inputResponses={"confirm": accept(ok=True)},
                        requestState=sent)
    assert refused.status_code == 400
    assert refused.json()["error"]["data"]["field"] == "params.requestState"
    done = call_tool(mcp, name, inputResponses={"confirm": accept(ok=True)},
                     requestState=issued).json()["result"]
    assert done["resultType"] == "complete"


def test_only_declared_capabilities_are_asked_through(mcp_for, alice, on):
    mcp = mcp_for(alice, initialize=False)
    asked = call_tool(mcp, "test_input_required_result_capabilities", meta=SAMPLING).json()
    assert [r["method"] for r in asked["result"]["inputRequests"].values()] == [
        "sampling/createMessage"]
    roots = call_tool(mcp, "test_input_required_result_list_roots",
                      inputResponses={"client_roots": {"roots": [{"uri": "file:///r"}]}})
    assert roots.json()["result"]["content"][0]["text"] == "The client's roots: file:///r"
    null = call_tool(mcp, "test_input_required_result_elicitation", inputResponses=None)
    assert null.json()["error"]["data"]["field"] == "params.inputResponses"


def test_the_fixture_prompt_asks_inside_prompts_get_and_only_when_on(mcp_for, alice, request):
    mcp = mcp_for(alice, initialize=False)
    name = "test_input_required_result_prompt"
    get = {"name": name}
    routed = {"Mcp-Name": name}
    assert stateless(mcp, "prompts/list").json()["result"]["prompts"] == []
    unknown = stateless(mcp, "prompts/get", get, meta=EVERYTHING, **routed)
    assert (unknown.status_code, unknown.json()["error"]["data"]["field"]) == (400, "params.name")
    conformance.install()
    request.addfinalizer(conformance.uninstall)
    assert [p["name"] for p in stateless(mcp, "prompts/list").json()["result"]["prompts"]] == [
        name]
    asked = stateless(mcp, "prompts/get", get, meta=EVERYTHING, **routed).json()["result"]
    wire.InputRequiredResult.model_validate(asked)
    done = stateless(mcp, "prompts/get", {**get, "inputResponses": {
        "user_context": accept(context="billing")}}, meta=EVERYTHING, **routed).json()["result"]
    wire.GetPromptResult.model_validate(done)
    assert done["messages"][0]["content"]["text"].endswith("billing")


def test_a_declined_elicitation_is_an_answer_not_a_fault(mcp_for, alice, on):
    done = call_tool(mcp_for(alice, initialize=False), "test_input_required_result_elicitation",
                     inputResponses={"user_name": {"action": "decline"}}).json()["result"]
    assert done["content"][0]["text"] == "Hello, (declined)!"
