"""Provenance: every fact an agent gets back names its episode, and get_episode opens it
with the same scope rules as every other read."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.principal import principal_from_key
from accounts.services import api_key_create
from echomem.errors import NotFound, ValidationFailed
from memories.graph.services import memory_create
from tests.factories import fact
from tools.calling import run_validated
from tools.registry import TOOLS


def node(name: str) -> dict[str, str]:
    return {"name": name, "type": "service"}


def opened(principal, **arguments: Any) -> dict[str, Any]:
    arguments.setdefault("scope", "shared")
    return run_validated(principal, TOOLS["get_episode"], arguments)


@pytest.fixture
def two_episodes(engine):
    """A planning call records how billing works; a retro records an outage and replaces
    the first call's Stripe fact with a newer one on the same edge."""
    first = engine.write(session_id="planning-call", project="payments", assume_new=True,
                         entities=[node("billing"), node("Stripe"), node("Dana")], facts=[
        fact("billing", "Stripe", "depends_on", "Billing charges cards through Stripe"),
        fact("Dana", "billing", "owns", "Dana owns the billing service"),
    ])
    second = engine.write(session_id="retro", assume_new=True,
                          entities=[node("billing"), node("Stripe"), node("ledger outage")],
                          facts=[
        fact("ledger outage", "billing", "hit", "The ledger outage led to failed billing runs",
             causal_hint="led_to"),
        fact("billing", "Stripe", "depends_on",
             "Billing charges cards through Stripe Connect since the retro"),
    ])
    return first, second


def test_every_returned_fact_names_the_episode_that_wrote_it(engine, two_episodes):
    first, second = (e["episode_id"] for e in two_episodes)
    assert first != second
    engine.index()
    # The search (the hot path reads its facts in one SQL query) and the digest (model rows).
    searched = engine.query("charges cards", include_superseded=True)["facts"]
    digest = engine.query(digest=True, include_superseded=True)["facts"]
    assert len(digest) == 4
    for found in (searched, digest):
        by_text = {f["fact"]: f["episode_id"] for f in found}
        assert by_text["Billing charges cards through Stripe"] == first  # superseded
        assert by_text["Billing charges cards through Stripe Connect since the retro"] == second
    assert {f["fact"]: f["episode_id"] for f in digest}["Dana owns the billing service"] == first
    traced = engine.trace("billing", direction="upstream")
    assert [link["episode_id"] for chain in traced["causes"] for link in chain] == [second]
    created = [e for e in engine.audit()["events"] if e["action"] == "fact.created"]
    assert [e["after"]["episode_id"] for e in created] == [first, first, second, second]


def test_get_episode_returns_session_time_writer_entities_and_facts(alice, engine,
                                                                    two_episodes):
    first, second = two_episodes
    out = opened(alice.principal, episode_id=second["episode_id"])
    assert out["episode_id"] == second["episode_id"]
    assert (out["session_id"], out["project"], out["scope"]) == ("retro", None, "shared")
    assert out["written_by"] == {"tool": "claude-code", "holder": "alice",
                                 "key": f"laptop (em_{alice.key.prefix}_…)"}
    assert out["created_at"] is not None
    assert [(f["position"], f["fact"], f["live"]) for f in out["facts"]] == [
        (0, "The ledger outage led to failed billing runs", True),
        (1, "Billing charges cards through Stripe Connect since the retro", True)]
    assert all(f["episode_id"] == second["episode_id"] for f in out["facts"])
    # The Stripe fact it superseded was written by the first episode, and says so.
    assert [(f["fact"], f["episode_id"]) for f in out["replaced"]] == [
        ("Billing charges cards through Stripe", first["episode_id"])]
    assert [e["name"] for e in out["entities_created"]] == ["ledger outage"]
    assert (out["facts_next"], out["units"], out["cut_by_allowance"]) == (None, 3, False)
    older = opened(alice.principal, episode_id=first["episode_id"])
    assert older["project"] == "payments"
    assert [f["live"] for f in older["facts"]] == [False, True]
    assert sorted(e["name"] for e in older["entities_created"]) == ["Dana", "Stripe", "billing"]
    assert older["replaced"] == []


def test_a_long_episode_pages_through_its_facts(alice, engine):
    names = [f"service {i}" for i in range(7)]
    written = engine.write(assume_new=True, entities=[node(n) for n in names], facts=[
        fact(names[i], names[i + 1], "calls", f"Service {i} calls service {i + 1}")
        for i in range(6)])
    seen, after = [], None
    while True:
        page = opened(alice.principal, episode_id=written["episode_id"], limit=4,
                      facts_after=after)
        seen += [f["position"] for f in page["facts"]]
        after = page["facts_next"]
        if after is None:
            break
    assert seen == [0, 1, 2, 3, 4, 5]


def test_another_scope_account_or_memory_is_not_found_like_a_made_up_id(alice, bob, charlie,
                                                                        engine):
    mine = engine.write(scope="solo", assume_new=True, entities=[node("laptop"), node("vpn")],
                        facts=[fact("laptop", "vpn", "uses", "My laptop uses the office VPN")])
    episode_id = mine["episode_id"]
    assert opened(alice.principal, scope="solo", episode_id=episode_id)["facts"]
    made_up = "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11"
    with pytest.raises(NotFound) as absent:
        opened(alice.principal, scope="solo", episode_id=made_up)
    memory_create(account_id=alice.account.pk, name="ops")
    _, other_tool = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                   tool="support-bot")
    for principal, arguments in [
        (alice.principal, {"scope": "shared"}),                     # the shared partition
        (alice.principal, {"scope": "solo", "memory": "ops"}),      # another memory
        (principal_from_key(other_tool), {"scope": "solo"}),        # alice's other tool
        (bob.principal, {"scope": "solo"}),                         # a teammate's solo
        (bob.principal, {"scope": "shared"}),
        (charlie.principal, {"scope": "solo"}),                     # another account
        (charlie.principal, {"scope": "shared"}),
    ]:
        with pytest.raises(NotFound) as refused:
            opened(principal, episode_id=episode_id, **arguments)
        memory = arguments.get("memory", "default")
        assert refused.value.field == absent.value.field == "episode_id"
        assert refused.value.message == absent.value.message.replace(made_up, episode_id) \
            .replace("'default'", repr(memory))
        assert refused.value.fix == absent.value.fix


def test_an_episode_that_only_created_entities_costs_nothing(alice, engine):
    written = engine.write(assume_new=True, entities=[node("lonely")])
    out = opened(alice.principal, episode_id=written["episode_id"])
    assert (out["facts"], out["units"]) == ([], 0)
    assert [e["name"] for e in out["entities_created"]] == ["lonely"]


@pytest.mark.parametrize("arguments, field", [
    ({}, "episode_id"),
    ({"episode_id": "not-an-id"}, "episode_id"),
    ({"episode_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11", "limit": 0}, "limit"),
    ({"episode_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11", "facts_after": -1}, "facts_after"),
    ({"episode_id": "6f1c1b4e-3f1a-4e55-9c55-2f7d3b0c1a11", "facts_after": 2**40},
     "facts_after"),
])
def test_bad_arguments_are_named(alice, arguments, field):
    with pytest.raises(ValidationFailed) as refused:
        opened(alice.principal, **arguments)
    assert refused.value.field == field


def test_opening_an_episode_costs_the_same_queries_however_many_facts_it_wrote(alice, engine):
    def queries_to_open(size: int) -> int:
        names = [f"host {size}-{i}" for i in range(size + 1)]
        written = engine.write(assume_new=True, entities=[node(n) for n in names], facts=[
            fact(names[i], names[i + 1], "replicates_to", f"{names[i]} replicates to the next")
            for i in range(size)])
        # Authenticated first: the key's row is kept only half a second (key_cache).
        principal = alice.principal
        with CaptureQueriesContext(connection) as captured:
            assert len(opened(principal, episode_id=written["episode_id"])["facts"]) == size
        return len(captured)

    assert queries_to_open(2) == queries_to_open(60)
