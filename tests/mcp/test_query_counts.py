"""How many SQL statements each tool call makes, pinned: an N+1 or an extra round trip in
any tool fails here (issue 38: the refactor keeps every count equal or lower).

Each tool is called once to warm the process caches (the key, the account's redaction
settings, the embedder), then measured on a second call that does the same kind of work.
"""

from __future__ import annotations

import copy
import math

import pytest

from accounts.principal import principal_from_key
from memories.search import planner_stats
from tests.tool_arguments import base_arguments, renamed
from tools.calling import call_tool
from tools.registry import TOOLS

# Statements per call, measured on main when the pin was set (362bc57 + the moves); the
# searches' SET LOCALs ride in their statements' round trips since issue 42 (two fewer for
# each tool that searches).
QUERIES = {
    "write_episode": 13,
    "query_memory": 15,
    "trace_cause": 16,
    "get_episode": 11,
    "record_recall_save": 9,
    "get_audit_log": 8,
    "get_usage": 3,
    "memory_save": 7,
    "memory_search": 19,
    "memory_context": 9,
    "memory_details": 9,
    "forget": 18,
}


@pytest.fixture
def ready(alice):
    """alice's principal, and arguments that name a real episode, fact and note."""
    principal = principal_from_key(alice.plaintext)
    placeholder = {"episode_id": "", "fact_id": "", "note_id": ""}
    written = call_tool(principal, TOOLS["write_episode"],
                        renamed(base_arguments(placeholder)["write_episode"], "seed"))
    note = call_tool(principal, TOOLS["memory_save"],
                     base_arguments(placeholder)["memory_save"])
    ids = {"episode_id": written["episode_id"], "fact_id": written["edges_created"][0]["fact_id"],
           "note_id": note["id"]}
    return principal, base_arguments(ids)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_each_tool_call_makes_its_pinned_number_of_queries(name, ready, monkeypatch,
                                                           django_assert_num_queries):
    principal, arguments = ready
    # The write path looks for tables without planner statistics at most once a second
    # (memories/search/planner_stats.py): whether the measured call is the one that looks
    # depends on the clock, so the look is held off and the count is the call's own.
    monkeypatch.setattr(planner_stats, "_next_check", math.inf)
    tool = TOOLS[name]
    first = arguments[name] if name != "write_episode" else renamed(arguments[name], "warm")
    second = arguments[name] if name != "write_episode" else renamed(arguments[name], "pin")
    if name != "forget":  # forgetting the note twice would measure a refusal
        call_tool(principal, tool, copy.deepcopy(first))
    with django_assert_num_queries(QUERIES[name]):
        call_tool(principal, tool, copy.deepcopy(second))


def test_every_registered_tool_has_a_pinned_count():
    assert set(QUERIES) == set(TOOLS)
