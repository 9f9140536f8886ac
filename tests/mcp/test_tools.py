"""tools/list and tools/call: schemas, results in three places, errors a model can act on."""

from __future__ import annotations

import json

import jsonschema
import pytest

from accounts.services import api_key_create
from billing.models import UsageRecord
from memories.graph.services import memory_create
from tools.contract import RESERVED_RESULT_NAMES
from tools.registry import TOOLS

NAMES = ["write_episode", "query_memory", "trace_cause", "get_episode", "record_recall_save",
         "get_audit_log", "get_usage", "memory_save", "memory_search", "memory_context",
         "memory_details", "forget"]
# The note tools default scope to shared (EchoVault's agents never name one).
SCOPE_OPTIONAL = {"get_usage", "memory_save", "memory_search", "memory_context",
                  "memory_details"}


def episode(**extra):
    return {"scope": "shared", "session_id": "s1", "assume_new": True,
            "entities": [{"name": "Checkout 502s", "type": "incident"},
                         {"name": "Pool exhaustion", "type": "cause"},
                         {"name": "Deploy 41", "type": "change"}],
            "facts": [
                {"source": "Checkout 502s", "target": "Pool exhaustion", "relation_type": "cause",
                 "fact": "Checkout returned 502s because the database pool was exhausted.",
                 "confidence": "extracted", "causal_hint": "caused_by"},
                {"source": "Deploy 41", "target": "Pool exhaustion", "relation_type": "triggered",
                 "fact": "Deploy 41 halved the pool size, which exhausted the pool.",
                 "confidence": "extracted", "causal_hint": "led_to"}],
            **extra}


def test_tools_list_declares_every_tool_with_schemas_and_annotations(mcp_for, alice):
    listed = mcp_for(alice).request("tools/list").json()["result"]["tools"]
    assert [tool["name"] for tool in listed] == NAMES
    for tool in listed:
        assert len(tool["description"]) > 80
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["inputSchema"]["type"] == tool["outputSchema"]["type"] == "object"
        assert "$ref" not in json.dumps(tool["inputSchema"]) + json.dumps(tool["outputSchema"])
        if tool["name"] not in SCOPE_OPTIONAL:
            assert "scope" in tool["inputSchema"]["required"]
        assert not RESERVED_RESULT_NAMES & set(tool["outputSchema"]["properties"])
        annotations = tool["annotations"]
        assert annotations["openWorldHint"] is False
        # Only forget removes what was written (write_episode's supersession keeps history).
        assert annotations["destructiveHint"] is (tool["name"] == "forget")
    by_name = {tool["name"]: tool["annotations"] for tool in listed}
    assert by_name["query_memory"]["readOnlyHint"] is True
    assert by_name["write_episode"]["readOnlyHint"] is False
    assert by_name["write_episode"]["idempotentHint"] is True
    assert by_name["record_recall_save"]["idempotentHint"] is False
    assert by_name["forget"]["readOnlyHint"] is False
    assert by_name["forget"]["idempotentHint"] is False  # a second call finds nothing


def test_tools_call_results_carry_the_output_at_top_level_in_structured_content_and_text(
        mcp_for, alice):
    result = mcp_for(alice).call("write_episode", episode())["result"]
    assert result["isError"] is False
    assert result["stored"] is True
    assert len(result["edges_created"]) == 2
    assert result["structuredContent"]["edges_created"] == result["edges_created"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["content"][0]["type"] == "text"


def test_remember_recall_why_round_trip_and_outputs_match_their_schemas(mcp_for, alice):
    session = mcp_for(alice)
    schemas = {tool.name: tool.output_schema() for tool in TOOLS.values()}
    written = session.call("write_episode", episode())["result"]
    recalled = session.call("query_memory", {"scope": "shared", "query": "why did checkout "
                                             "fail with 502", "top_k": 5})["result"]
    assert recalled["facts"][0]["fact"].startswith("Checkout returned 502s")
    assert recalled["units"] == recalled["count"] >= 1
    why = session.call("trace_cause", {"scope": "shared", "subject": "Checkout 502s",
                                       "direction": "upstream"})["result"]
    chain = [link["fact"] for link in why["causes"][0]]
    assert chain == ["Checkout returned 502s because the database pool was exhausted.",
                     "Deploy 41 halved the pool size, which exhausted the pool."]
    saved = session.call("record_recall_save", {
        "scope": "shared", "fact_id": recalled["facts"][0]["fact_id"],
        "note": "did not have to explain the outage again"})["result"]
    audit = session.call("get_audit_log", {"scope": "shared"})["result"]
    assert {event["action"] for event in audit["events"]} >= {"fact.created",
                                                              "recall_save.recorded"}
    for name, out in [("write_episode", written), ("query_memory", recalled),
                      ("trace_cause", why), ("record_recall_save", saved),
                      ("get_audit_log", audit)]:
        jsonschema.validate(out["structuredContent"], schemas[name])


def test_a_recalled_fact_leads_to_its_episode_and_both_match_their_schemas(mcp_for, alice):
    session = mcp_for(alice)
    written = session.call("write_episode", episode())["result"]
    recalled = session.call("query_memory", {"scope": "shared", "digest": True})["result"]
    assert {f["episode_id"] for f in recalled["facts"]} == {written["episode_id"]}
    why = session.call("trace_cause", {"scope": "shared", "subject": "Checkout 502s"})["result"]
    assert why["empty_sides"] == ["effects"] and "no effect" in why["message"]
    opened = session.call("get_episode", {"scope": "shared",
                                          "episode_id": recalled["facts"][0]["episode_id"]})
    result = opened["result"]
    assert result["isError"] is False
    assert result["session_id"] == "s1" and result["written_by"]["tool"] == "claude-code"
    assert [f["fact_id"] for f in result["facts"]] == [
        e["fact_id"] for e in written["edges_created"]]
    assert len(result["entities_created"]) == 3 and result["units"] == 2
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    for name, out in [("query_memory", recalled), ("trace_cause", why), ("get_episode", result)]:
        jsonschema.validate(out["structuredContent"], TOOLS[name].output_schema())


def test_another_tenants_episode_is_a_not_found_tool_error_like_a_made_up_one(mcp_for, alice,
                                                                              charlie):
    written = mcp_for(alice).call("write_episode", episode())["result"]
    theirs = mcp_for(charlie).call("get_episode", {"scope": "shared",
                                                   "episode_id": written["episode_id"]})
    made_up = mcp_for(charlie).call("get_episode", {
        "scope": "shared", "episode_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11"})
    for reply, episode_id in [(theirs, written["episode_id"]),
                              (made_up, "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11")]:
        result = reply["result"]
        assert result["isError"] is True
        assert (result["error"]["code"], result["error"]["field"]) == ("not_found", "episode_id")
        assert result["error"]["message"] == f"no episode {episode_id} in memory 'default'"


def test_an_ambiguous_write_is_a_normal_result_that_says_how_to_resolve(mcp_for, alice):
    session = mcp_for(alice)
    session.call("write_episode", episode())
    again = session.call("write_episode", {
        "scope": "shared", "entities": [{"name": "checkout 502", "type": "incident"},
                                        {"name": "Deploy 42", "type": "change"}],
        "facts": [{"source": "Deploy 42", "target": "checkout 502", "relation_type": "fixed",
                   "fact": "Deploy 42 fixed the checkout 502s.", "confidence": "extracted"}],
    })["result"]
    assert again["stored"] is False
    assert again["edges_created"] == []
    assert again["ambiguous_entities"][0]["name"] == "checkout 502"
    assert "entity_resolutions" in again["message"]
    jsonschema.validate(again["structuredContent"], TOOLS["write_episode"].output_schema())


@pytest.mark.parametrize("tool, arguments, field", [
    ("write_episode", {"entities": []}, "scope"),
    ("write_episode", {"scope": "team", "entities": []}, "scope"),
    ("write_episode", {"scope": "shared"}, "entities"),
    ("write_episode", {"scope": "shared", "entities": [{"name": "A"}]}, "entities[0].type"),
    ("write_episode", {"scope": "shared", "entities": [{"name": "A", "type": "x"}],
                       "facts": [{"source": "A", "target": "B", "relation_type": "r",
                                  "fact": "f", "confidence": "extracted"}]},
     "facts[0].target"),
    ("write_episode", {"scope": "shared", "entities": [{"name": "A", "type": "x"}],
                       "facts": [{"source": "A", "target": "A", "relation_type": "r",
                                  "fact": "f", "confidence": "sure"}]},
     "facts[0].confidence"),
    ("write_episode", {"scope": "shared", "entities": [{"name": "A", "type": "x"}],
                       "facts": [{"source": "A", "target": "A", "relation_type": "r",
                                  "fact": "f" * 4001, "confidence": "extracted"}]},
     "facts[0].fact"),
    ("write_episode", {"scope": "shared", "entities": [], "assume_new": "maybe"}, "assume_new"),
    ("write_episode", {"scope": "shared", "entities": [], "colour": "red"}, "colour"),
    ("query_memory", {"scope": "shared"}, "query"),
    ("query_memory", {"scope": "shared", "query": "x", "top_k": 0}, "top_k"),
    ("query_memory", {"scope": "shared", "query": "x", "as_of": "yesterday"}, "as_of"),
    ("trace_cause", {"scope": "shared"}, "subject"),
    ("trace_cause", {"scope": "shared", "subject": "x", "max_hops": 9}, "max_hops"),
    ("trace_cause", {"scope": "shared", "subject": "x", "direction": "sideways"}, "direction"),
    ("record_recall_save", {"scope": "shared", "fact_id": "nope", "note": "n"}, "fact_id"),
    ("record_recall_save", {"scope": "shared",
                            "fact_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11"}, "note"),
    ("get_episode", {"scope": "shared"}, "episode_id"),
    ("get_episode", {"scope": "shared", "episode_id": "7"}, "episode_id"),
    ("get_episode", {"scope": "shared", "episode_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11",
                     "limit": 501}, "limit"),
    ("get_audit_log", {"scope": "shared", "since": "last week"}, "since"),
    ("get_audit_log", {"scope": "shared", "limit": 501}, "limit"),
])
def test_invalid_arguments_are_tool_errors_naming_the_field_and_the_fix(mcp_for, alice, tool,
                                                                        arguments, field):
    result = mcp_for(alice).call(tool, arguments)["result"]
    assert result["isError"] is True
    assert result["error"]["code"] == "invalid_argument"
    assert result["error"]["field"] == field
    text = result["content"][0]["text"]
    assert field.split("[")[0] in text
    assert "Fix:" in text


def test_an_unknown_memory_is_a_tool_error_listing_the_existing_ones(mcp_for, alice):
    result = mcp_for(alice).call("query_memory", {"scope": "shared", "query": "x",
                                                  "memory": "typo"})["result"]
    assert result["isError"] is True
    assert result["error"]["field"] == "memory"
    assert "default" in result["content"][0]["text"]


def test_an_unknown_fact_is_a_tool_error(mcp_for, alice):
    result = mcp_for(alice).call("record_recall_save", {
        "scope": "shared", "fact_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11",
        "note": "n"})["result"]
    assert result["isError"] is True
    assert result["error"]["code"] == "not_found"
    assert "query_memory" in result["content"][0]["text"]


def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(mcp_for, alice):
    response = mcp_for(alice).call("delete_everything", {})
    assert response["error"]["code"] == -32602
    assert "query_memory" in response["error"]["message"]


def test_arguments_that_are_not_an_object_are_invalid_params(mcp_for, alice):
    session = mcp_for(alice)
    response = session.request("tools/call", {"name": "query_memory", "arguments": [1]})
    assert response.json()["error"]["code"] == -32602


def test_the_memory_argument_and_the_keys_default_memory_choose_the_graph(mcp_for, alice):
    other = memory_create(account_id=alice.account.pk, name="support-bot")
    session = mcp_for(alice)
    session.call("write_episode", episode(memory="support-bot"))
    in_default = session.call("query_memory", {"scope": "shared", "digest": True})["result"]
    in_other = session.call("query_memory", {"scope": "shared", "digest": True,
                                             "memory": "support-bot"})["result"]
    assert (in_default["count"], in_other["count"]) == (0, 2)
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                  tool="support-bot", default_memory=other)
    bot = mcp_for(type("Key", (), {"plaintext": plaintext}))
    by_default = bot.call("query_memory", {"scope": "shared", "digest": True})["result"]
    assert (by_default["memory"], by_default["count"]) == ("support-bot", 2)


def test_a_tenant_never_sees_another_tenants_facts(mcp_for, alice, charlie):
    mcp_for(alice).call("write_episode", episode())
    theirs = mcp_for(charlie).call("query_memory", {"scope": "shared",
                                                    "query": "checkout 502"})["result"]
    assert theirs["facts"] == []
    trace = mcp_for(charlie).call("trace_cause", {"scope": "shared",
                                                  "subject": "Checkout 502s"})["result"]
    assert trace["empty_reason"] == "no_anchor"


def test_every_call_that_costs_units_leaves_one_usage_record(mcp_for, alice, settings):
    settings.SELF_HOSTED = False
    session = mcp_for(alice)
    session.call("write_episode", episode())
    session.call("write_episode", episode())  # identical: creates nothing, costs nothing
    session.call("query_memory", {"scope": "shared", "query": "pool", "top_k": 1})
    session.call("query_memory", {"scope": "shared", "query": "x", "top_k": 0})  # refused
    records = list(UsageRecord.objects.order_by("at").values_list(
        "account_id", "key_id", "memory_name", "tool", "units"))
    assert records == [(alice.account.pk, alice.key.pk, "default", "write_episode", 2),
                       (alice.account.pk, alice.key.pk, "default", "query_memory", 1)]


def test_every_fact_the_engine_shows_has_exactly_the_declared_output_fields():
    """The fact view is declared once (memories/graph/selectors.py FACT_VIEW); its keys are the
    output schema's, so neither can gain or lose a field alone."""
    from memories.graph.selectors import FACT_VIEW
    from tools.results import FactOut

    assert [shown.key for shown in FACT_VIEW] == list(FactOut.model_fields)


# Tools whose `project` argument is not a label of what they write or read (memory_details
# opens a note by id, whatever its project).
PROJECT_NOT_A_LABEL = {"memory_details"}


def test_every_tool_that_labels_by_project_takes_it_from_the_project_header():
    takes = {tool.name for tool in TOOLS.values()
             if "project" in tool.input_schema().get("properties", {})}
    filled = {tool.name for tool in TOOLS.values() if "project" in tool.context_defaults}
    assert takes - PROJECT_NOT_A_LABEL == filled


def test_an_episode_without_a_project_is_filed_under_the_header_s(mcp_for, alice):
    session = mcp_for(alice)
    written = session.request("tools/call", {"name": "write_episode", "arguments": episode()},
                              **{"X-Echo-Project": "shop-api"}).json()["result"]
    assert written["stored"] is True
    other = {"scope": "shared", "assume_new": True, "project": "billing",
             "entities": [{"name": "Invoice run", "type": "job"},
                          {"name": "Ledger lock", "type": "cause"}],
             "facts": [{"source": "Invoice run", "target": "Ledger lock",
                        "relation_type": "blocked_by", "confidence": "extracted",
                        "fact": "The invoice run 502s came from waiting on the ledger lock."}]}
    named = session.request("tools/call", {"name": "write_episode", "arguments": other},
                            **{"X-Echo-Project": "shop-api"})
    assert named.json()["result"]["isError"] is False
    found = session.call("query_memory", {"scope": "shared", "query": "why 502s",
                                          "include_superseded": True})["result"]
    assert {fact["project"] for fact in found["facts"]} == {"shop-api", "billing"}
