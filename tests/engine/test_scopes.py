"""Partitions: solo facts belong to one holder's one tool; accounts never see each other."""

from __future__ import annotations

import pytest

from accounts.principal import principal_from_key
from accounts.services import api_key_create
from echomem.errors import NotFound
from memories.graph.services import memory_create
from tests.factories import Engine, fact, person


def write_secret(engine: Engine, scope: str) -> dict:
    out = engine.write(scope=scope, entities=[person("Alice"), person("Bob")], assume_new=True,
                       facts=[fact("Alice", "Bob", "owes", "Alice owes Bob forty dollars")])
    Engine.index()
    return out


@pytest.fixture
def alice_other_tool(alice) -> Engine:
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="cursor",
                                  tool="cursor")
    return Engine(principal_from_key(plaintext))


def visible(engine: Engine, scope: str) -> list[str]:
    return [f["fact"] for f in engine.query("who owes money", scope=scope)["facts"]]


def test_solo_facts_are_invisible_to_another_tool_of_the_same_holder(engine, alice_other_tool):
    write_secret(engine, "solo")
    assert visible(engine, "solo") == ["Alice owes Bob forty dollars"]
    assert visible(alice_other_tool, "solo") == []
    assert visible(alice_other_tool, "shared") == []
    assert alice_other_tool.trace("Alice", scope="solo")["empty_reason"] == "no_anchor"
    assert alice_other_tool.audit(scope="solo")["events"] == []


def test_solo_facts_are_invisible_to_another_holder_and_to_shared(engine, bob):
    write_secret(engine, "solo")
    assert visible(Engine(bob.principal), "solo") == []
    assert visible(engine, "shared") == []


def test_shared_facts_are_visible_to_the_whole_account_only(engine, bob, charlie):
    write_secret(engine, "shared")
    assert visible(Engine(bob.principal), "shared") == ["Alice owes Bob forty dollars"]
    assert visible(Engine(charlie.principal), "shared") == []
    assert Engine(charlie.principal).audit()["events"] == []


def test_solo_and_shared_entities_are_separate_nodes(engine):
    shared = write_secret(engine, "shared")
    solo = write_secret(engine, "solo")
    assert shared["entities"][0]["id"] != solo["entities"][0]["id"]


def test_a_recall_save_on_a_fact_of_another_partition_is_not_found(engine, alice_other_tool,
                                                                   charlie):
    fact_id = write_secret(engine, "solo")["edges_created"][0]["fact_id"]
    for other, scope in ((alice_other_tool, "solo"), (alice_other_tool, "shared"),
                         (Engine(charlie.principal), "shared")):
        with pytest.raises(NotFound) as caught:
            other.save(scope=scope, fact_id=fact_id, note="helped")
        assert caught.value.field == "fact_id"


def test_memories_are_separate_graphs(engine, alice):
    memory_create(account_id=alice.account.pk, name="support")
    engine.write(memory="support", entities=[person("Alice"), person("Bob")], assume_new=True,
                 facts=[fact("Alice", "Bob", "owes", "Alice owes Bob forty dollars")])
    Engine.index()
    assert engine.query("who owes money", memory="support")["count"] == 1
    assert engine.query("who owes money")["count"] == 0


def test_another_accounts_memory_name_is_unknown(engine, charlie):
    memory_create(account_id=charlie.account.pk, name="charlie-only")
    with pytest.raises(NotFound, match="unknown memory 'charlie-only'"):
        engine.query("anything", memory="charlie-only")
