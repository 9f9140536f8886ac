"""One tool call, whichever door it came through: validate, redact, run, shape the reply."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from accounts.limits import refuse_if_read_only
from accounts.principal import Principal
from accounts.redaction_settings import redactor_for
from echomem import log_context, metrics
from echomem.db import timeouts_refused
from echomem.request_context import NO_CONTEXT, RequestContext
from tools import free_text
from tools.contract import Tool
from tools.parsing import parse


def call_tool(principal: Principal, tool: Tool, arguments: dict[str, Any] | None,
              context: RequestContext = NO_CONTEXT) -> dict:
    """Validate, redact and run (the engine charges units inside its own transactions); the
    reply as plain JSON values. Raises EchoError subclasses. Counted and timed per tool and
    outcome (echomem/metrics.py); every log line of the call names the tool.

    Every call's free text is redacted here, once, before the tool sees it
    (tools/free_text.py): no tool redacts on its own. An output that declares
    `redacted` reports how many secrets were replaced."""
    log_context.bind(tool=tool.name)
    with metrics.tool_call(tool.name):
        obey_limits(principal, tool)
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


def run_validated(principal: Principal, tool: Tool, arguments: dict[str, Any]) -> dict:
    """The tool's handler on validated arguments, as in-process code calls it (benchmarks,
    the backup drill, tests): no redaction, no metrics, no JSON round trip, so the reply
    keeps its Python values (datetimes, UUIDs)."""
    obey_limits(principal, tool)
    return tool.run(principal, parse(tool.args, arguments))


def obey_limits(principal: Principal, tool: Tool) -> None:
    """The principal's limits that a tool's contract decides (accounts/limits.py): a
    read-only key calls no tool that writes, erases or records. The memory a call may use
    is checked where its memory is resolved (memories.graph.selectors.memory_for)."""
    if tool.writes:
        refuse_if_read_only(principal, tool=tool.name)
