"""What a tool is: one declaration that both doors serve and the docs describe.

A tool names its argument model (the MCP inputSchema, the REST request body, the
validation), its result model (outputSchema and the REST response), the handler that calls
the engine's services or selectors, what a call is charged for and which audit events it
records. Free text in the arguments is redacted before the handler runs (tools/calling.py),
so a tool declares what it redacts by its argument model: every string not marked
`Verbatim` (tools/arguments.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel

from accounts.principal import Principal

Handler = Callable[[Principal, Any], dict[str, Any]]

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
    run: Handler
    read_only: bool
    idempotent: bool
    # What one unit is charged for ("" when the tool is free); the engine charges it,
    # inside the transaction that does the work.
    meters: str
    # The audit actions a call may record (empty for a read).
    audits: frozenset[str] = frozenset()
    destructive: bool = False
    # Arguments the request may supply when the call omits them (RequestContext, e.g. the
    # X-Echo-Project header for `project`).
    context_defaults: tuple[str, ...] = ()
    # The output member the MCP text block shows, when a client expects that shape there
    # (memory_search's list); structuredContent always carries the whole object.
    text_from: str | None = None

    @property
    def writes(self) -> bool:
        """Writes, erases or records (its annotations say so): what a read-only key may not
        call (accounts/limits.py)."""
        return not self.read_only or self.destructive or bool(self.audits)

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


def keywords(service: Callable[..., dict[str, Any]], *,
             leave_out: frozenset[str] = frozenset()) -> Handler:
    """A handler that calls a keyword-only service with the validated arguments, field by
    field (nested models stay models), less those the engine has no use for."""
    def handler(principal: Principal, args: BaseModel) -> dict[str, Any]:
        return service(principal, **{name: getattr(args, name)
                                     for name in type(args).model_fields
                                     if name not in leave_out})
    handler.__name__ = handler.__qualname__ = service.__name__
    handler.__doc__ = service.__doc__
    return handler


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
