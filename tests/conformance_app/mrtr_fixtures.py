"""The conformance suite's fixtures for 2026-07-28's input_required results (SEP-2322).

The suite's `input-required-result-*` scenarios call these by name: a tool that needs input
from the client answers with `resultType: "input_required"` and `inputRequests` (elicitation,
sampling, roots/list, keyed by name), and the client retries the same call with
`params.inputResponses` under those keys. What a tool must remember between rounds travels
with the client as `requestState`, signed with the server's SECRET_KEY for this tool and this
API key, so a changed, foreign or forged state is refused (-32602), never trusted. Served
only where this test-only app is installed, to 2026-07-28 requests (tests/conformance_app/
tools.py).
"""

from __future__ import annotations

from typing import Any

from django.core import signing

from mcp_gateway.jsonrpc import INVALID_PARAMS, RpcError
from tests.conformance_app.diagnostics import (
    Call,
    Diagnostic,
    bad_answer,
    input_required,
    require,
    text_result,
)

STATE_SALT = "echo-memory.mcp.request-state"
LIST_ROOTS = {"method": "roots/list", "params": {}}


def elicit(message: str, field: str, kind: str = "string") -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}},
                            "required": [field]}}}


def sample(text: str, max_tokens: int) -> dict[str, Any]:
    return {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens}}


def elicited(call: Call, key: str, field: str) -> Any:
    """The value the user gave for `field`, None if not answered yet; declining is an answer."""
    answer = call.answer(key)
    if answer is None:
        return None
    action = answer.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise bad_answer(key, ".action", "must be accept, decline or cancel")
    if action != "accept":
        return {"decline": "(declined)", "cancel": "(cancelled)"}[action]
    content = answer.get("content")
    if not isinstance(content, dict) or field not in content:
        raise bad_answer(key, f".content.{field}", "is required: the form asked for it")
    return content[field]


def sampled(call: Call, key: str) -> str | None:
    answer = call.answer(key)
    if answer is None:
        return None
    content = answer.get("content")
    if not isinstance(content, dict) or not isinstance(content.get("text", ""), str):
        raise bad_answer(key, ".content", "must be the sampled message's content block")
    return content.get("text") or f"({content.get('type', 'empty')} content)"


def roots(call: Call, key: str) -> list[str] | None:
    answer = call.answer(key)
    if answer is None:
        return None
    listed = answer.get("roots")
    if not isinstance(listed, list) or not all(
            isinstance(root, dict) and isinstance(root.get("uri"), str) for root in listed):
        raise bad_answer(key, ".roots", "must be a list of roots, each with a uri")
    return [root["uri"] for root in listed]


def seal(call: Call, tool: str, state: dict[str, Any]) -> str:
    return signing.dumps({"tool": tool, "key": call.context.principal.key_id, **state},
                         salt=STATE_SALT, compress=True)


def opened(call: Call, tool: str) -> dict[str, Any] | None:
    """The state this tool sealed in an earlier round, None for a first round."""
    sent = call.params.get("requestState")
    if sent is None:
        return None
    try:
        state = signing.loads(sent, salt=STATE_SALT) if isinstance(sent, str) else None
    except signing.BadSignature:
        state = None
    if (not isinstance(state, dict) or state.get("tool") != tool
            or state.get("key") != call.context.principal.key_id):
        raise RpcError(INVALID_PARAMS, "params.requestState is not a state this server gave "
                       f"to a {tool} call with this key (changed, or from another call): send "
                       "back the requestState of the last input_required result unchanged, or "
                       "call again without inputResponses and requestState to start over",
                       data={"field": "params.requestState"})
    return state


def asking(requests: dict[str, dict[str, Any]], state: str | None = None) -> dict[str, Any]:
    result = input_required(requests)
    if state is not None:
        result["requestState"] = state
    return result


def form_elicitation(declared: Any) -> bool:
    return isinstance(declared, dict) and ("form" in declared or "url" not in declared)


def needs(call: Call, *capabilities: str) -> None:
    for capability in capabilities:
        if capability == "elicitation":
            require(call, "elicitation", {"elicitation": {"form": {}}}, form_elicitation)
        else:
            require(call, capability, {capability: {}})


def greet(call: Call) -> dict[str, Any]:
    needs(call, "elicitation")
    name = elicited(call, "user_name", "name")
    if name is None:
        return asking({"user_name": elicit("What is your name?", "name")})
    return text_result(f"Hello, {name}!")


def capital(call: Call) -> dict[str, Any]:
    needs(call, "sampling")
    said = sampled(call, "capital_question")
    if said is None:
        return asking({"capital_question": sample("What is the capital of France?", 100)})
    return text_result(f"The client's model said: {said}")


def list_roots(call: Call) -> dict[str, Any]:
    needs(call, "roots")
    uris = roots(call, "client_roots")
    if uris is None:
        return asking({"client_roots": LIST_ROOTS})
    return text_result(f"The client's roots: {', '.join(uris) or 'none'}")


REQUEST_STATE = "test_input_required_result_request_state"


def request_state(call: Call) -> dict[str, Any]:
    needs(call, "elicitation")
    state = opened(call, REQUEST_STATE)
    ok = elicited(call, "confirm", "ok")
    if state is None or ok is None:
        if state is None and ok is not None:
            raise RpcError(INVALID_PARAMS, "params.requestState is required with this answer: "
                           "send back the requestState of the input_required result",
                           data={"field": "params.requestState"})
        return asking({"confirm": elicit("Please confirm", "ok", "boolean")},
                      seal(call, REQUEST_STATE, {"round": 1}))
    return text_result(f"state-ok: the request state came back intact; ok={ok}")


MULTIPLE = "test_input_required_result_multiple_inputs"


def multiple_inputs(call: Call) -> dict[str, Any]:
    needs(call, "elicitation", "sampling", "roots")
    opened(call, MULTIPLE)
    asked = {"user_name": elicit("What is your name?", "name"),
             "greeting": sample("Generate a greeting", 50), "client_roots": LIST_ROOTS}
    name, greeting = elicited(call, "user_name", "name"), sampled(call, "greeting")
    uris = roots(call, "client_roots")
    answers = {"user_name": name, "greeting": greeting, "client_roots": uris}
    missing = {key: request for key, request in asked.items() if answers[key] is None}
    if missing:  # ask again for what is still missing
        return asking(missing, seal(call, MULTIPLE, {}))
    return text_result(f"{greeting} {name}; roots: {', '.join(uris) or 'none'}")


MULTI_ROUND = "test_input_required_result_multi_round"


def multi_round(call: Call) -> dict[str, Any]:
    """Two questions, one per round; the first answer rides in the state to the third."""
    needs(call, "elicitation")
    state = opened(call, MULTI_ROUND) or {"round": 0}
    if state["round"] == 1:
        name = elicited(call, "step1", "name")
        if name is not None:
            state = {"round": 2, "name": name}
    elif state["round"] == 2:
        color = elicited(call, "step2", "color")
        if color is not None:
            return text_result(f"{state['name']}'s favourite colour is {color}.")
    if state["round"] == 2:
        return asking({"step2": elicit("Step 2: What is your favorite color?", "color")},
                      seal(call, MULTI_ROUND, state))
    return asking({"step1": elicit("Step 1: What is your name?", "name")},
                  seal(call, MULTI_ROUND, {"round": 1}))


TAMPERED = "test_input_required_result_tampered_state"


def tampered_state(call: Call) -> dict[str, Any]:
    needs(call, "elicitation")
    state = opened(call, TAMPERED)
    ok = elicited(call, "confirm", "ok")
    if state is None or ok is None:
        return asking({"confirm": elicit("Please confirm", "ok", "boolean")},
                      seal(call, TAMPERED, {}))
    return text_result(f"The signed state was intact; ok={ok}")


def capabilities(call: Call) -> dict[str, Any]:
    """Ask only through what the client declared: the revision forbids relying on the rest."""
    declared = call.capabilities()
    offered = {"user_name": ("elicitation", elicit("What is your name?", "name")),
               "greeting": ("sampling", sample("Generate a greeting", 50)),
               "client_roots": ("roots", LIST_ROOTS)}
    asked = {key: request for key, (capability, request) in offered.items()
             if (form_elicitation if capability == "elicitation" else
                 lambda value: isinstance(value, dict))(declared.get(capability))}
    if not asked:
        return text_result("The client declared no capability to ask through.")
    if all(call.answer(key) is not None for key in asked):
        return text_result(f"Answered through: {', '.join(asked)}.")
    return asking(asked)


def fixture(name: str, what: str, run) -> Diagnostic:
    return Diagnostic(name=name, title=f"Conformance: {what}",
                      description=f"Conformance suite fixture (input_required): {what}.",
                      run=run, modern_only=True)


FIXTURES: list[Diagnostic] = [
    fixture("test_input_required_result_elicitation", "asks the user's name", greet),
    fixture("test_input_required_result_sampling", "asks the client's model", capital),
    fixture("test_input_required_result_list_roots", "asks the client's roots", list_roots),
    fixture(REQUEST_STATE, "confirms with a signed request state", request_state),
    fixture(MULTIPLE, "asks three things at once", multiple_inputs),
    fixture(MULTI_ROUND, "asks two things over two rounds", multi_round),
    fixture(TAMPERED, "refuses a changed request state", tampered_state),
    fixture("test_input_required_result_capabilities",
            "asks only through declared capabilities", capabilities),
]


PROMPT = {"name": "test_input_required_result_prompt", "title": "Conformance: prompt context",
          "description": ("Conformance suite fixture (input_required on prompts/get): asks "
                          "the user for the context the prompt should use.")}


def prompt_with_context(call: Call) -> dict[str, Any]:
    """prompts/get of the fixture prompt: input_required works beyond tools/call."""
    needs(call, "elicitation")
    context = elicited(call, "user_context", "context")
    if context is None:
        return asking({"user_context": elicit("What context should the prompt use?",
                                              "context")})
    return {"description": PROMPT["description"], "messages": [{"role": "user", "content": {
        "type": "text", "text": f"Answer with this context in mind: {context}"}}]}
