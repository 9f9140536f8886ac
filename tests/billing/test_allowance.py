"""The monthly allowance as agents meet it: writes refused whole, reads cut short, then refused."""

from __future__ import annotations

import pytest

from audit.models import AuditEvent
from billing import rates
from billing.models import Plan, UsagePeriod, UsageRecord
from billing.plans import month_of
from memories.models import Fact
from tests.mcp.conftest import Mcp


def facts(*pairs: tuple[str, str]) -> dict:
    names = sorted({name for pair in pairs for name in pair})
    return {"scope": "shared", "entities": [{"name": n, "type": "thing"} for n in names],
            "facts": [{"source": s, "target": t, "relation_type": "relates_to",
                       "fact": f"{s} relates to {t} in the billing test",
                       "confidence": "extracted"} for s, t in pairs]}


def free_units(units: int) -> None:
    Plan.objects.filter(is_default=True).update(monthly_units=units)


@pytest.fixture
def agent(client, alice):
    session = Mcp(client, alice.plaintext)
    session.initialize()
    return session


def tool_error(reply: dict) -> dict:
    result = reply["result"]
    assert result["isError"] is True, result
    return result["error"]


def test_a_write_past_the_allowance_is_refused_whole_and_says_what_to_do(agent, alice):
    free_units(5)
    assert agent.call("write_episode", facts(("a", "b"), ("b", "c"), ("c", "d")))[
        "result"]["units"] == 3
    stored_before = Fact.objects.count(), AuditEvent.objects.count()

    response = agent.request("tools/call", {"name": "write_episode", "arguments": facts(
        ("d", "e"), ("e", "f"), ("f", "g"))})
    assert response.status_code == 200  # a tool error, not a 429: waiting does not help
    assert "Retry-After" not in response
    error = tool_error(response.json())
    assert error["code"] == "allowance_exhausted"
    assert (error["used"], error["allowed"]) == (3, 5)
    month = month_of()
    next_first = f"{month.year + (month.month == 12)}-{month.month % 12 + 1:02d}-01T00:00:00Z"
    assert error["resets_at"] == next_first
    assert error["upgrade_url"].endswith("/billing")
    text = response.json()["result"]["content"][0]["text"]
    assert "3 of 5 units used" in text and "needs 3 units and 2 remain" in text
    assert "nothing was stored" in text and next_first in text and "/billing" in text
    assert (Fact.objects.count(), AuditEvent.objects.count()) == stored_before
    assert UsagePeriod.objects.get(account_id=alice.account.pk).units == 3
    # What fits still goes through, exactly to the allowance.
    assert agent.call("write_episode", facts(("d", "e"), ("e", "f")))["result"]["units"] == 2
    assert UsagePeriod.objects.get(account_id=alice.account.pk).units == 5


def test_a_write_that_creates_nothing_costs_nothing_even_at_zero(agent):
    free_units(2)
    episode = facts(("a", "b"), ("b", "c"))
    assert agent.call("write_episode", episode)["result"]["units"] == 2
    again = agent.call("write_episode", episode)["result"]
    assert again["isError"] is False and again["units"] == 0 and again["stored"] is True


def test_a_read_is_cut_to_the_units_left_and_says_so_then_refused_at_zero(agent, alice):
    free_units(6)
    agent.call("write_episode", facts(("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")))
    cut = agent.call("query_memory", {"scope": "shared", "query": "relates billing test",
                                      "top_k": 10})["result"]
    assert cut["isError"] is False
    assert cut["count"] == cut["units"] == 2 and len(cut["facts"]) == 2
    assert cut["cut_by_allowance"] is True
    assert "Returned 2 of 4 facts" in cut["message"]
    assert [f["rank"] for f in cut["facts"]] == [1, 2]  # the best ones are kept

    refused = tool_error(agent.call("query_memory", {"scope": "shared", "query": "relates",
                                                     "top_k": 10}))
    assert refused["code"] == "allowance_exhausted" and refused["used"] == 6
    assert "no units remain" in refused["message"]
    # A query that finds nothing (the empty solo scope) costs nothing, so it is not refused.
    empty = agent.call("query_memory", {"scope": "solo", "query": "relates",
                                        "top_k": 10})["result"]
    assert empty["isError"] is False and empty["facts"] == [] and empty["units"] == 0
    assert sum(UsageRecord.objects.values_list("units", flat=True)) == 6


def test_audit_log_fact_snapshots_are_charged_like_returned_facts(agent):
    free_units(5)
    agent.call("write_episode", facts(("a", "b"), ("b", "c")))  # 3 entities, 2 facts: 2 units
    log = agent.call("get_audit_log", {"scope": "shared"})["result"]
    created = [e for e in log["events"] if e["action"] == "fact.created"]
    assert len(created) == 2 and log["units"] == 2 and log["cut_by_allowance"] is False
    # One unit left: the page stops after the first snapshot it cannot pay for.
    cut = agent.call("get_audit_log", {"scope": "shared"})["result"]
    assert cut["cut_by_allowance"] is True and cut["units"] == 1
    assert [e["action"] for e in cut["events"]].count("fact.created") == 1
    assert cut["next_cursor"] is not None
    assert "fact or note snapshot" in cut["message"]


def test_get_usage_tells_the_agent_its_allowance(agent):
    free_units(100)
    agent.call("write_episode", facts(("a", "b")))
    usage = agent.call("get_usage", {})["result"]
    assert usage["metered"] is True and usage["plan"] == "free"
    assert (usage["used"], usage["allowed"], usage["remaining"]) == (1, 100, 99)
    assert usage["requests_per_minute"] == 240 and usage["units"] == 0
    assert "99 of 100 units left" in usage["message"]


def test_self_hosted_meters_nothing(agent, settings):
    settings.SELF_HOSTED = True
    free_units(1)
    result = agent.call("write_episode", facts(("a", "b"), ("b", "c")))["result"]
    assert result["isError"] is False and result["units"] == 2
    assert not UsageRecord.objects.exists() and not UsagePeriod.objects.exists()
    assert agent.call("get_usage", {})["result"]["metered"] is False


def test_one_accounts_exhausted_allowance_never_blocks_another(agent, client, charlie):
    free_units(1)
    agent.call("write_episode", facts(("a", "b")))
    assert tool_error(agent.call("write_episode", facts(("c", "d"))))["code"] == \
        "allowance_exhausted"
    other = Mcp(client, charlie.plaintext)
    other.initialize()
    assert other.call("write_episode", facts(("c", "d")))["result"]["units"] == 1


def test_the_plan_sets_each_keys_request_rate(client, alice):
    rates.forget()
    Plan.objects.filter(is_default=True).update(requests_per_minute=3)
    session = Mcp(client, alice.plaintext)
    session.initialize()  # initialize and the initialized notification: 2 requests
    assert session.request("tools/list").status_code == 200
    assert session.request("tools/list").status_code == 429
    rates.forget()


def test_people_searching_in_the_dashboard_are_not_charged(agent, client, alice):
    free_units(2)
    agent.call("write_episode", facts(("a", "b"), ("b", "c")))  # the allowance is used up
    client.force_login(alice.user)
    page = client.get("/memories/default/", {"q": "relates billing test"})
    assert page.status_code == 200
    assert len(page.context["results"]["facts"]) == 2  # shown whole, not cut
    assert list(UsageRecord.objects.values_list("tool", flat=True)) == ["write_episode"]


def test_audit_log_events_say_what_their_write_was_charged(agent):
    agent.call("write_episode", facts(("a", "b"), ("b", "c")))
    events = agent.call("get_audit_log", {"scope": "shared"})["result"]["events"]
    assert {(e["action"], e["units"]) for e in events} == {("entity.created", 0),
                                                           ("fact.created", 1)}


def test_a_digest_is_cut_and_refused_like_a_search(agent, alice):
    free_units(4)
    agent.call("write_episode", facts(("a", "b"), ("b", "c"), ("c", "d")))
    cut = agent.call("query_memory", {"scope": "shared", "digest": True, "top_k": 10})["result"]
    assert (cut["count"], cut["cut_by_allowance"]) == (1, True)
    refused = tool_error(agent.call("query_memory", {"scope": "shared", "digest": True}))
    assert refused["code"] == "allowance_exhausted"
    assert UsagePeriod.objects.get(account_id=alice.account.pk).units == 4


def test_trace_cause_pays_per_distinct_fact_and_never_splits_a_chain(agent):
    episode = facts(("deploy", "outage"), ("outage", "refunds"))
    for fact in episode["facts"]:
        fact["causal_hint"] = "led_to"
    agent.call("write_episode", episode)
    ask = {"scope": "shared", "subject": "refunds", "direction": "upstream"}
    free_units(3)  # 2 used, 1 left: the one chain holds two facts, so nothing fits
    refused = tool_error(agent.call("trace_cause", ask))
    assert refused["code"] == "allowance_exhausted"
    free_units(4)
    traced = agent.call("trace_cause", ask)["result"]
    returned = {link["fact_id"] for chain in traced["causes"] for link in chain}
    assert traced["units"] == len(returned) == 2 and traced["cut_by_allowance"] is False


def test_get_episode_pays_per_fact_keeps_a_replacement_with_what_it_replaced(agent):
    agent.call("write_episode", facts(("a", "b"), ("b", "c")))
    newer = facts(("a", "b"), ("c", "d"), ("d", "e"))  # a->b again: it supersedes
    newer["facts"][0]["fact"] = "a relates to b, said again differently"
    episode_id = agent.call("write_episode", newer)["result"]["episode_id"]
    ask = {"scope": "shared", "episode_id": episode_id}
    free_units(6)  # 5 used, 1 left: the first fact needs 2 (itself and the version it replaced)
    refused = tool_error(agent.call("get_episode", ask))
    assert refused["code"] == "allowance_exhausted"
    free_units(8)  # 3 left: the first fact with its earlier version, then one more
    cut = agent.call("get_episode", ask)["result"]
    assert cut["isError"] is False and cut["cut_by_allowance"] is True
    assert [f["fact"] for f in cut["facts"]] == ["a relates to b, said again differently",
                                                 "c relates to d in the billing test"]
    assert [f["fact"] for f in cut["replaced"]] == ["a relates to b in the billing test"]
    assert (cut["units"], cut["facts_next"]) == (3, 1)
    assert "Returned 2 of 3 facts" in cut["message"] and "facts_after: 1" in cut["message"]
    free_units(9)
    rest = agent.call("get_episode", ask | {"facts_after": cut["facts_next"]})["result"]
    assert [f["fact"] for f in rest["facts"]] == ["d relates to e in the billing test"]
    assert (rest["units"], rest["facts_next"], rest["cut_by_allowance"]) == (1, None, False)
    assert sum(UsageRecord.objects.filter(tool="get_episode").values_list("units",
                                                                          flat=True)) == 4
