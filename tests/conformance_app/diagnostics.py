"""The official MCP conformance suite's diagnostic tools, for its runs only.

The suite's `server-stateless` scenario (SEP-2575) probes three rules of 2026-07-28 through
tools its reference server defines, by name: a request that needs a client capability the
client did not declare is refused with -32021 and HTTP 400 (`test_missing_capability`,
which needs sampling); input a tool needs from the client travels inside the result, an
`input_required` result, never as a request of its own on the response stream
(`test_streaming_elicitation`); and no log message goes out unless the request asked for a
level (`test_logging_tool`). A memory service has no tool that samples, elicits or logs to
the client, so these live in this test-only app, installed by tests/conformance_settings.py
alone (the conformance test's own server), and are served only to 2026-07-28 requests, the
revision whose rules they probe.

Each does what its name promises, at the minimum the revision defines: the first round of a
call asks for its input (`inputRequests`), the client's retry carries the answers
(`params.inputResponses`, by the keys asked), and the result then uses them. The server keeps
nothing between the rounds, so there is no `requestState`.

The same app serves the fixtures of the suite's `tools-call-*` scenarios, at both eras
(they ask nothing of the client): fixed text, image, audio, embedded-resource and mixed
content, a tool error, and progress notifications for a request that sent a progressToken.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import wave
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from echomem.errors import EchoError
from mcp_gateway.jsonrpc import INVALID_PARAMS, RpcError
from mcp_gateway.stateless import CLIENT_CAPABILITIES_KEY, MISSING_CAPABILITY
from tools.contract import json_schema
from tools.parsing import parse

if TYPE_CHECKING:
    from mcp_gateway.methods import Context

INPUT_RESPONSES = "inputResponses"


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class Call:
    """What a diagnostic tool reads of its tools/call; its context takes its notifications."""

    params: dict[str, Any]
    context: Context

    def capabilities(self) -> dict[str, Any]:
        return self.params["_meta"][CLIENT_CAPABILITIES_KEY]

    def answer(self, key: str) -> dict[str, Any] | None:
        """The client's answer to the input request `key`, None when it sent none (yet)."""
        if INPUT_RESPONSES not in self.params:
            return None
        responses = self.params[INPUT_RESPONSES]
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, f"params.{INPUT_RESPONSES} must be an object mapping "
                           "each key of the earlier inputRequests to the client's result",
                           data={"field": f"params.{INPUT_RESPONSES}"})
        answer = responses.get(key)
        if answer is not None and not isinstance(answer, dict):
            raise bad_answer(key, "", "must be the result object of the request asked")
        return answer


@dataclass(frozen=True)
class Diagnostic:
    name: str
    title: str
    description: str
    run: Callable[[Call], dict[str, Any]]
    args: type[BaseModel] = NoArguments
    # Probes a rule of 2026-07-28 (per-request capabilities, input_required): not for sessions.
    modern_only: bool = False

    def input_schema(self) -> dict[str, Any]:
        return json_schema(self.args, "validation")

    def output_schema(self) -> None:
        return None  # their results are content blocks only

    def annotations(self) -> dict[str, Any]:
        return {"title": self.title, "readOnlyHint": True, "destructiveHint": False,
                "idempotentHint": True, "openWorldHint": False}

    def call(self, params: dict[str, Any], context: Context) -> dict[str, Any]:
        try:
            parse(self.args, params.get("arguments"))
        except EchoError as exc:
            return text_result(f"{exc.message}. Fix: {exc.fix}", error=True)
        return self.run(Call(params, context))


def text_result(text: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def input_required(requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"resultType": "input_required", "inputRequests": requests}


def require(call: Call, capability: str, required: dict[str, Any],
            declared: Callable[[Any], bool] = lambda value: isinstance(value, dict)) -> None:
    """Refuse (-32021, HTTP 400) a call whose client did not declare what it needs."""
    if not declared(call.capabilities().get(capability)):
        raise RpcError(MISSING_CAPABILITY,
                       f"this tool needs the client's {capability} capability, which this "
                       f"request's _meta[{CLIENT_CAPABILITIES_KEY!r}] does not declare: declare "
                       f"{json.dumps(required)} there if the client supports it",
                       data={"requiredCapabilities": required})


def bad_answer(key: str, member: str, problem: str) -> RpcError:
    field = f"params.{INPUT_RESPONSES}.{key}{member}"
    return RpcError(INVALID_PARAMS, f"{field} {problem}", data={"field": field})


SAMPLE = "sample"


def missing_capability(call: Call) -> dict[str, Any]:
    """Ask the client's model for one line (sampling), then return what it said."""
    require(call, "sampling", {"sampling": {}})
    answer = call.answer(SAMPLE)
    if answer is None:
        return input_required({SAMPLE: {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {
                "type": "text", "text": "Reply with one short greeting."}}],
            "maxTokens": 50}}})
    content = answer.get("content")
    if isinstance(content, dict) and content.get("type") == "text":
        text = content.get("text")
        if not isinstance(text, str):
            raise bad_answer(SAMPLE, ".content.text", "must be the sampled text")
        return text_result(f"The client's model said: {text}")
    if isinstance(content, dict | list):
        return text_result("The client's model answered with non-text content.")
    raise bad_answer(SAMPLE, ".content", "must be the sampled message's content (an object)")


CONFIRM = "confirm"
ACTIONS = ("accept", "decline", "cancel")


def _form_elicitation(declared: Any) -> bool:
    # A client that declares only URL-mode elicitation cannot answer a form.
    return isinstance(declared, dict) and ("form" in declared or "url" not in declared)


def streaming_elicitation(call: Call) -> dict[str, Any]:
    """Ask the user to confirm (an elicitation inside the result), then say what they chose."""
    require(call, "elicitation", {"elicitation": {"form": {}}}, _form_elicitation)
    answer = call.answer(CONFIRM)
    if answer is None:
        return input_required({CONFIRM: {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Confirm the conformance probe.",
            "requestedSchema": {"type": "object", "properties": {
                "confirmed": {"type": "boolean", "title": "Confirmed"}},
                "required": ["confirmed"]}}}})
    action = answer.get("action")
    if action not in ACTIONS:
        raise bad_answer(CONFIRM, ".action", f"must be one of {', '.join(ACTIONS)}")
    if action != "accept":
        return text_result(f"The user chose to {action}.")
    content = answer.get("content")
    if not isinstance(content, dict) or not isinstance(content.get("confirmed"), bool):
        raise bad_answer(CONFIRM, ".content.confirmed", "must be true or false: the form "
                          "asked for it")
    return text_result(f"The user answered confirmed={str(content['confirmed']).lower()}.")


def logging_tool(call: Call) -> dict[str, Any]:
    """Log at two levels; each reaches the client only if the request asked for that level."""
    call.context.log("debug", "test_logging_tool: starting")
    call.context.log("info", "test_logging_tool: done")
    return text_result("Logged one debug and one info message; the client receives those at "
                       "or above the level its request's _meta asked for, none without one.")


def _png() -> bytes:
    """A 1x1 red PNG, built here rather than pasted in."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def _wav() -> bytes:
    """A millisecond of silence as 8 kHz mono WAV."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 8)
    return buffer.getvalue()


IMAGE = {"type": "image", "data": base64.b64encode(_png()).decode(), "mimeType": "image/png"}
AUDIO = {"type": "audio", "data": base64.b64encode(_wav()).decode(), "mimeType": "audio/wav"}
RESOURCE = {"type": "resource", "resource": {
    "uri": "test://embedded-resource", "mimeType": "text/plain",
    "text": "This is an embedded resource content."}}


def content(*blocks: dict[str, Any]) -> Callable[[Call], dict[str, Any]]:
    def run(call: Call) -> dict[str, Any]:
        return {"content": list(blocks), "isError": False}

    return run


def error_handling(call: Call) -> dict[str, Any]:
    return text_result("This tool intentionally returns an error for testing", error=True)


def with_progress(call: Call) -> dict[str, Any]:
    """Report three steps of progress, if the request asked for progress."""
    for done in (0, 50, 100):
        call.context.progress(done, 100, f"Completed step {done} of 100")
    return text_result(f"Reported progress for token {call.context.progress_token!r}.")


DIAGNOSTICS: list[Diagnostic] = [
    Diagnostic(
        name="test_missing_capability", title="Conformance: needs sampling",
        description=("Conformance suite diagnostic: asks the client's model for one line "
                     "(sampling). A client that does not declare sampling is refused with "
                     "-32021."),
        run=missing_capability, modern_only=True),
    Diagnostic(
        name="test_streaming_elicitation", title="Conformance: asks the user",
        description=("Conformance suite diagnostic: asks the user to confirm through "
                     "elicitation, inside an input_required result rather than as a request "
                     "on the response stream."),
        run=streaming_elicitation, modern_only=True),
    Diagnostic(
        name="test_logging_tool", title="Conformance: logs",
        description=("Conformance suite diagnostic: sends a debug and an info log message, "
                     "only at or above the level the request's _meta asks for."),
        run=logging_tool, modern_only=True),
    Diagnostic(name="test_simple_text", title="Conformance: text",
               description="Conformance suite fixture: returns one text block.",
               run=content({"type": "text",
                            "text": "This is a simple text response for testing."})),
    Diagnostic(name="test_image_content", title="Conformance: image",
               description="Conformance suite fixture: returns one PNG image block.",
               run=content(IMAGE)),
    Diagnostic(name="test_audio_content", title="Conformance: audio",
               description="Conformance suite fixture: returns one WAV audio block.",
               run=content(AUDIO)),
    Diagnostic(name="test_embedded_resource", title="Conformance: embedded resource",
               description="Conformance suite fixture: returns one embedded text resource.",
               run=content(RESOURCE)),
    Diagnostic(name="test_multiple_content_types", title="Conformance: mixed content",
               description="Conformance suite fixture: returns text, image and resource blocks.",
               run=content({"type": "text", "text": "Multiple content types test:"}, IMAGE,
                           RESOURCE)),
    Diagnostic(name="test_error_handling", title="Conformance: tool error",
               description="Conformance suite fixture: always fails, as a result with isError.",
               run=error_handling),
    Diagnostic(name="test_tool_with_progress", title="Conformance: progress",
               description=("Conformance suite fixture: reports progress 0, 50 and 100 of 100 "
                            "when the request's _meta carries a progressToken."),
               run=with_progress),
]
