"""Every registered tool, over MCP and REST, with arguments from its schema and hostile mutations.

The tools come from the registry at run time, so a tool added later is fuzzed without
anyone remembering to. Each case sends the base arguments first and then the mutated
ones; a refusal of the mutated call must name the field the fuzzer changed whenever the
base was accepted. After every call: no 5xx, no -32603, no HTML, no traceback in the
server log, the reply in its documented shape, and the database as the replies said.
"""

from __future__ import annotations

import pytest
from hypothesis import given, note

from tests.fuzz.conftest import FUZZ
from tests.fuzz.schema_values import cases, check_supported, resolve
from tests.fuzz.tool_calls import assert_names_field, call_tool, shown
from tools.registry import TOOLS


@pytest.mark.parametrize("transport", ["mcp", "rest"])
@pytest.mark.parametrize("name", sorted(TOOLS))
def test_hostile_arguments_are_refused_by_field_and_only_reported_writes_are_stored(
        name, transport, fuzz, mcp, rest):
    tool = TOOLS[name]
    schema = tool.input_schema()
    check_supported(schema)
    client = mcp if transport == "mcp" else rest

    @FUZZ
    @given(case=cases(schema))
    def run(case):
        base, mutated = resolve([case.base, case.mutated], fuzz.pool)
        fuzz.stats["cases"] += 1
        note(f"base: {shown(base)}")
        note(f"mutation: {case.mutation.kind}: {case.mutation.description}")
        first = call_tool(fuzz, client, tool, base, lambda outcome: outcome.accepted or
                          assert_names_field(outcome, arguments=base, schema=schema,
                                             transport=transport, mutation=None,
                                             base_accepted=False))
        call_tool(fuzz, client, tool, mutated, lambda outcome: outcome.accepted or
                  assert_names_field(outcome, arguments=mutated, schema=schema,
                                     transport=transport, mutation=case.mutation,
                                     base_accepted=first.accepted))

    run()
