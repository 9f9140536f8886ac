"""The tool registry: one declaration per tool, used by MCP tools/list, tools/call and REST.

Each declaration names the argument model of memories/schemas.py (inputSchema and
validation), the result model of outputs.py (outputSchema), the engine function
that does the work, the annotations and a description an agent can act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from pydantic import BaseModel

from accounts.principal import Principal
from accounts.redaction_settings import redactor_for
from billing.tool import GetUsageArgs, get_usage
from echomem import log_context, metrics
from echomem.db import timeouts_refused
from echomem.request_context import NO_CONTEXT, RequestContext
from mcp_gateway import outputs
from memories import free_text
from memories.erasure import forget
from memories.graph import causal, episodes, selectors, services
from memories.notes import selectors as note_reads
from memories.notes import services as notes
from memories.schemas import (
    ForgetArgs,
    GetAuditLogArgs,
    GetEpisodeArgs,
    MemoryContextArgs,
    MemoryDetailsArgs,
    MemorySaveArgs,
    MemorySearchArgs,
    QueryMemoryArgs,
    RecordRecallSaveArgs,
    TraceCauseArgs,
    WriteEpisodeArgs,
    parse,
)

# A tools/call result repeats the output at its top level (the guide's clients read
# `result.stored`), so no output may use the names MCP gives the result's own members
# (resultType is 2026-07-28's).
RESERVED_RESULT_NAMES = frozenset({"content", "structuredContent", "isError", "_meta",
                                   "resultType"})


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: type[BaseModel]
    output: type[BaseModel]
    run: Callable[[Principal, Any], dict[str, Any]]
    read_only: bool
    idempotent: bool
    destructive: bool = False
    # Arguments the request may supply when the call omits them (RequestContext, e.g. the
    # X-Echo-Project header for `project`).
    context_defaults: tuple[str, ...] = ()
    # The output member the MCP text block shows, when a client expects that shape there
    # (memory_search's list); structuredContent always carries the whole object.
    text_from: str | None = None

    def text(self, output: dict[str, Any]) -> str:
        shown = output if self.text_from is None else output[self.text_from]
        return json.dumps(shown, ensure_ascii=False)

    def input_schema(self) -> dict[str, Any]:
        return json_schema(self.args, "validation")

    def output_schema(self) -> dict[str, Any]:
        return json_schema(self.output, "serialization")

    def annotations(self) -> dict[str, Any]:
        return {"title": self.title, "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive, "idempotentHint": self.idempotent,
                "openWorldHint": False}


TOOLS: dict[str, Tool] = {tool.name: tool for tool in [
    Tool(
        name="write_episode", title="Remember what happened",
        description=(
            "Store what you learned in this conversation as entities and facts you extracted "
            "yourself (the server never calls a model). Call it when the user states something "
            "worth recalling later: a decision, a preference, who owns what, what caused an "
            "incident. Every fact's source and target must be listed in entities by exact name. "
            "Writing the same (source, target, relation_type) again replaces the old fact (it "
            "stays queryable as superseded). Check `stored`: when false, nothing was written "
            "because a name may mean an existing entity; call again with entity_resolutions "
            "mapping each name in ambiguous_entities to a candidate id or \"new\". Set "
            "causal_hint only when the conversation said one thing caused another. Costs one "
            "unit per fact created."),
        args=WriteEpisodeArgs, output=outputs.WriteEpisodeResult, run=services.write_episode,
        read_only=False, idempotent=True, context_defaults=("project",),
    ),
    Tool(
        name="query_memory", title="Recall facts",
        description=(
            "Recall stored facts by meaning and by words, best first. Call it before answering "
            "anything that earlier conversations may have settled (preferences, decisions, who "
            "or what something is), and before asking the user to repeat themselves. Each fact "
            "has rank, score (cosine similarity, comparable across queries: threshold on it; "
            "null when only the words matched) and matched. digest: true returns the most "
            "recent facts instead (omit query). valid_as_of asks what was true in the world at a "
            "time (from the facts' valid_at / invalid_at); as_of asks what the memory held at "
            "a time (what it knew then); both together: what it knew then about that time. "
            "facts_pending_vector counts facts not yet embedded by the model (just "
            "bulk-written): while it is above 0 they are found by words and a quick first-pass "
            "vector, so recall by meaning is approximate. "
            "Costs one unit per fact returned."),
        args=QueryMemoryArgs, output=outputs.QueryMemoryResult, run=selectors.query_memory,
        read_only=True, idempotent=True,
    ),
    Tool(
        name="trace_cause", title="Explain why",
        description=(
            "Answer a why question with chains of recorded causes (upstream) or effects "
            "(downstream) of a subject, nearest first. Use it instead of query_memory when the "
            "user asks why something happened or what it led to. It follows only facts written "
            "with a causal_hint, so an empty answer means nobody recorded a cause (empty_reason "
            "says whether the subject was not found or had no causal links), not that none "
            "exists. valid_as_of and as_of set the clock as in query_memory. Costs one unit "
            "per fact returned."),
        args=TraceCauseArgs, output=outputs.TraceCauseResult, run=causal.trace_cause,
        read_only=True, idempotent=True,
    ),
    Tool(
        name="get_episode", title="Trace a fact to its source",
        description=(
            "Where facts came from: the episode (one write_episode call) that wrote them, "
            "with its session_id, time, writer (tool, key holder, key) and project, the facts "
            "it wrote in order, the earlier versions they replaced and the entities it "
            "created. Pass the episode_id that every fact from query_memory or trace_cause "
            "carries. Use it when the user asks where something was learned, in which "
            "conversation, or by which agent. Page long episodes with facts_after. Costs one "
            "unit per fact returned."),
        args=GetEpisodeArgs, output=outputs.GetEpisodeResult, run=episodes.get_episode,
        read_only=True, idempotent=True,
    ),
    Tool(
        name="record_recall_save", title="Credit a recalled fact",
        description=(
            "Record that a fact you recalled (its fact_id from query_memory) saved the user "
            "from explaining something again; note says what it saved. Call it once per such "
            "moment. The writer is read from the fact and the reader from your key. Free."),
        args=RecordRecallSaveArgs, output=outputs.RecordRecallSaveResult,
        run=services.record_recall_save, read_only=False, idempotent=False,
    ),
    Tool(
        name="get_audit_log", title="Read the audit log",
        description=(
            "List every recorded change in a scope, oldest first: what changed, when, in which "
            "session and by which tool. Use it when the user asks who wrote or changed "
            "something, or what happened since a time (since). Page with next_cursor. Costs "
            "one unit per fact or note snapshot returned (fact.created, fact.superseded, "
            "note.created and note.updated events), as they would cost through query_memory "
            "or memory_search; other events are free."),
        args=GetAuditLogArgs, output=outputs.GetAuditLogResult, run=selectors.get_audit_log,
        read_only=True, idempotent=True,
    ),
    Tool(
        name="get_usage", title="Check the allowance",
        description=(
            "How many units (one per fact written or returned) the account has left this "
            "month, its plan, its rate limit and when the count resets. Call it when a write "
            "was refused for the allowance or a recall says it was cut short, or before a "
            "bulk import. Free."),
        args=GetUsageArgs, output=outputs.GetUsageResult, run=get_usage,
        read_only=True, idempotent=True,
    ),
    Tool(
        name="memory_save", title="Save a note",
        description=(
            "Save a note for future sessions. You MUST call this before ending any session in "
            "which you made changes, fixed a bug, made a decision or learned something not "
            "obvious from the code: an architectural choice (X over Y, and why), a bug (root "
            "cause and fix), a gotcha, setup or configuration. Do not save trivial changes, "
            "what the code already says, or duplicates. Saving the same title in the same "
            "project updates that note: the fields you give replace the stored ones (an "
            "empty string or list clears one), the fields you leave out keep their value, "
            "the earlier text is kept as history, and changed / kept in the reply say "
            "which is which. Secrets (keys, "
            "tokens, passwords) are redacted before anything is stored; mark anything else "
            "private as <redacted>...</redacted>. warnings says what would make the note "
            "useful later. Costs one unit per note saved (an identical re-save is free)."),
        args=MemorySaveArgs, output=outputs.MemorySaveResult, run=notes.memory_save,
        read_only=False, idempotent=True, context_defaults=("project",),
    ),
    Tool(
        name="memory_search", title="Search notes",
        description=(
            "Search saved notes (decisions, bugs, patterns) by meaning and by words, best "
            "first. You MUST call this at session start before doing any work, and whenever "
            "the user's request touches a topic that may have prior context. Each result has "
            "rank, score (cosine similarity; null when only words matched) and has_details "
            "(memory_details returns them). project filters to one project. Costs one unit "
            "per note returned."),
        args=MemorySearchArgs, output=outputs.MemorySearchResult, run=note_reads.memory_search,
        read_only=True, idempotent=True, context_defaults=("project",), text_from="results",
    ),
    Tool(
        name="memory_context", title="Load project context",
        description=(
            "The project's most recently saved notes (titles, categories, tags), newest "
            "first. You MUST call this at the start of every session to load prior decisions, "
            "bugs and context before working; then memory_search for specific topics and "
            "memory_save before the session ends. Costs one unit per note returned."),
        args=MemoryContextArgs, output=outputs.MemoryContextResult,
        run=note_reads.memory_context, read_only=True, idempotent=True,
        context_defaults=("project",),
    ),
    Tool(
        name="memory_details", title="Read a note in full",
        description=(
            "One note in full: details, related files and its earlier versions. Pass the id "
            "from memory_search or memory_context, or a unique prefix of 8 or more "
            "characters of it. Use it when a result has has_details and the summary is not "
            "enough. Costs one unit."),
        args=MemoryDetailsArgs, output=outputs.MemoryDetailsResult,
        run=note_reads.memory_details, read_only=True, idempotent=True,
    ),
    Tool(
        name="forget", title="Forget for good",
        description=(
            "Erase facts, entities or whole episodes (by the ids other tools returned) or notes "
            "(ids or 8+ character prefixes) from this memory for good: they are no longer "
            "recalled, traced or searched, and their text is erased from the audit trail too. "
            "Call it only when the user asks to forget or delete something, or to remove a "
            "secret or a mistake; to correct a fact, write it again instead (the old version "
            "stays as history). An entity goes with every fact to or from it; an episode with "
            "every fact it wrote. Any id not found in this scope refuses the whole call and "
            "nothing is forgotten. Free."),
        args=ForgetArgs, output=outputs.ForgetResult, run=forget.forget,
        read_only=False, idempotent=False, destructive=True,
    ),
]}


def call_tool(principal: Principal, tool: Tool, arguments: dict[str, Any] | None,
              context: RequestContext = NO_CONTEXT) -> dict:
    """Validate, redact and run (the engine charges units inside its own transactions); the
    reply as plain JSON values. Raises EchoError subclasses. Counted and timed per tool and
    outcome (echomem/metrics.py); every log line of the call names the tool.

    Every call's free text is redacted here, once, before the tool sees it
    (memories/free_text.py): no tool redacts on its own. An output that declares
    `redacted` reports how many secrets were replaced."""
    log_context.bind(tool=tool.name)
    with metrics.tool_call(tool.name):
        args = parse(tool.args, context.fill(tool.context_defaults, arguments))
        args, redacted = free_text.redacted(redactor_for(principal.account_id), args)
        with timeouts_refused():
            output = tool.run(principal, args)
        if "redacted" in tool.output.model_fields:
            output = output | {"redacted": redacted}
            if redacted and isinstance(output.get("message"), str):
                output["message"] += (f" {redacted} secret(s) in the arguments were replaced "
                                      "by [REDACTED:<kind>] first.")
        return json.loads(json.dumps(output, cls=DjangoJSONEncoder))


@cache
def json_schema(model: type[BaseModel], mode: str) -> dict[str, Any]:
    """The model's JSON Schema with its $defs inlined: some clients cannot follow $ref."""
    schema = model.model_json_schema(mode=mode)
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = inline(defs[ref.removeprefix("#/$defs/")])
                rest = {k: inline(v) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)
