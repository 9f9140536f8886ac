"""write_episode: validation, storage, supersession, idempotency, atomicity."""

from __future__ import annotations

import pytest

from audit.chain import ACCOUNT_PARTITION
from audit.models import AuditEvent
from echomem.errors import NotFound, ValidationFailed
from memories.graph.inputs import MAX_FACT_CHARS
from memories.models import Entity, Episode, Fact
from tests.factories import fact, person

ALICE_BOB = [person("Alice"), person("Bob")]


def rows() -> tuple[int, int, int, int]:
    return (Entity.objects.count(), Fact.objects.count(), Episode.objects.count(),
            # The account's own events (memory.created, key.created) predate every test.
            AuditEvent.objects.exclude(partition=ACCOUNT_PARTITION).count())


def test_an_episode_stores_entities_and_facts_and_reports_edges(engine):
    out = engine.write(session_id="chat-1", entities=ALICE_BOB, assume_new=True, facts=[
        fact("Alice", "Bob", "manages", "Alice manages Bob on the payments team"),
        fact("Bob", "Alice", "reports_to", "Bob reports to Alice"),
    ])
    assert out["stored"] is True
    assert out["units"] == 2
    assert [(e["source"], e["target"], e["relation_type"]) for e in out["edges_created"]] == [
        ("Alice", "Bob", "manages"), ("Bob", "Alice", "reports_to")]
    stored = Fact.objects.get(pk=out["edges_created"][0]["fact_id"])
    assert stored.fact == "Alice manages Bob on the payments team"
    assert stored.session_id == "chat-1"
    assert stored.written_by_tool == "claude-code"
    assert {e["name"]: e["created"] for e in out["entities"]} == {"Alice": True, "Bob": True}


def test_a_second_episode_reuses_nodes_by_exact_name(engine):
    engine.write(entities=ALICE_BOB, assume_new=True,
                 facts=[fact("Alice", "Bob", "manages", "Alice manages Bob")])
    out = engine.write(entities=[person("Alice"), person("Carol")], facts=[
        fact("Alice", "Carol", "mentors", "Alice mentors Carol")])
    assert out["stored"]
    assert Entity.objects.filter(name="Alice").count() == 1
    assert {e["name"]: e["created"] for e in out["entities"]} == {"Alice": False, "Carol": True}


def test_normalized_name_with_the_same_type_resolves_to_the_existing_node(engine):
    engine.write(entities=[{"name": "Acme Corp", "type": "company"}], assume_new=True)
    out = engine.write(entities=[{"name": "ACME  corp", "type": "Company"}, person("Dana")],
                       facts=[fact("Dana", "ACME  corp", "works_at", "Dana works at Acme")])
    assert out["stored"]
    assert Entity.objects.filter(normalized_name="acme corp").count() == 1
    assert Fact.objects.get().target.name == "Acme Corp"


def test_rewriting_a_key_supersedes_and_keeps_the_old_fact(engine):
    first = engine.write(entities=ALICE_BOB, assume_new=True,
                         facts=[fact("Alice", "Bob", "manages", "Alice manages Bob")])
    second = engine.write(entities=ALICE_BOB, facts=[
        fact("Alice", "Bob", "manages", "Alice no longer manages Bob; Carol does")])
    old_id = first["edges_created"][0]["fact_id"]
    new_id = second["edges_created"][0]["fact_id"]
    assert second["superseded"] == [{"fact_id": old_id, "source": "Alice", "target": "Bob",
                                     "relation_type": "manages", "superseded_by": new_id}]
    old, new = Fact.objects.get(pk=old_id), Fact.objects.get(pk=new_id)
    assert old.superseded_at is not None and old.superseded_by_id == new.pk
    assert new.supersedes == old and new.superseded_at is None
    assert Fact.objects.filter(superseded_at__isnull=True).count() == 1


def test_an_identical_rewrite_changes_nothing_and_costs_nothing(engine):
    facts = [fact("Alice", "Bob", "manages", "Alice manages Bob")]
    first = engine.write(entities=ALICE_BOB, assume_new=True, facts=facts)
    before = rows()
    again = engine.write(entities=ALICE_BOB, facts=facts)
    assert rows() == before
    assert again["stored"] is True
    assert again["units"] == 0 and again["edges_created"] == []
    assert again["unchanged"][0]["fact_id"] == first["edges_created"][0]["fact_id"]


def test_changing_only_the_confidence_or_hint_is_a_new_version(engine):
    engine.write(entities=ALICE_BOB, assume_new=True,
                 facts=[fact("Alice", "Bob", "manages", "Alice manages Bob")])
    out = engine.write(entities=ALICE_BOB, facts=[
        fact("Alice", "Bob", "manages", "Alice manages Bob", confidence="inferred")])
    assert len(out["superseded"]) == 1 and out["units"] == 1


def test_two_facts_with_one_key_in_a_call_are_refused_naming_both(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.write(entities=ALICE_BOB, facts=[
            fact("Alice", "Bob", "manages", "one"),
            fact("Bob", "Alice", "knows", "two"),
            fact("Alice", "Bob", "manages", "three"),
        ])
    assert "facts[0] and facts[2]" in caught.value.message
    assert caught.value.field == "facts[2]"
    assert rows() == (0, 0, 0, 0)


def test_a_fact_over_4000_characters_is_refused(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.write(entities=ALICE_BOB, facts=[
            fact("Alice", "Bob", "wrote", "x" * (MAX_FACT_CHARS + 1))])
    assert caught.value.field == "facts[0].fact"
    assert "4001 characters" in caught.value.message and "split" in caught.value.message
    engine.write(entities=ALICE_BOB, assume_new=True,
                 facts=[fact("Alice", "Bob", "wrote", "x" * MAX_FACT_CHARS)])


@pytest.mark.parametrize(("arguments", "field", "needle"), [
    ({"scope": "team"}, "scope", "'shared' or 'solo'"),
    ({"entities": "Alice"}, "entities", "valid list"),
    ({"entities": [{"name": "Alice"}]}, "entities[0].type", "required"),
    ({"entities": [{"name": "", "type": "person"}]}, "entities[0].name", "at least 1"),
    ({"facts": [{"source": "Alice", "target": "Bob", "relation_type": "x", "fact": "y",
                 "confidence": "sure"}]}, "facts[0].confidence", "'extracted', 'inferred'"),
    ({"facts": [{"source": "Alice", "target": "Bob", "relation_type": "x", "fact": "y",
                 "confidence": "extracted", "causal_hint": "because"}]},
     "facts[0].causal_hint", "'caused_by'"),
    ({"facts": [{"source": "Alice", "target": "Zed", "relation_type": "x", "fact": "y",
                 "confidence": "extracted"}]}, "facts[0].target", "not among entities"),
    ({"facts": [{"source": "Alice", "target": "Bob", "relation_type": "x", "fact": "y",
                 "confidence": "extracted", "valid_at": "last tuesday"}]},
     "facts[0].valid_at", "datetime"),
    ({"facts": [{"source": "Alice", "target": "Bob", "relation_type": "x", "fact": "y",
                 "confidence": "extracted", "valid_at": "2024-05-01",
                 "invalid_at": "2024-04-01"}]}, "facts[0]", "swap them"),
    ({"entity_resolutions": {"Zed": "new"}}, "entity_resolutions['Zed']", "not among"),
    ({"entity_resolutions": {"Alice": "the old one"}}, "entity_resolutions['Alice']",
     "neither \"new\" nor an entity id"),
    ({"top_k": 3}, "top_k", "unknown argument"),
    ({"entities": [person("Alice"), {"name": "Alice", "type": "robot"}]}, "entities[1]",
     "listed twice"),
])
def test_every_bad_field_is_named_with_its_fix(engine, arguments, field, needle):
    base = {"scope": "shared", "entities": ALICE_BOB, "facts": []}
    with pytest.raises(ValidationFailed) as caught:
        engine.write(**(base | arguments))
    assert caught.value.field == field, caught.value.message
    assert needle in caught.value.message
    assert rows() == (0, 0, 0, 0)


def test_all_problems_are_reported_at_once(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.write(entities=[{"name": "A"}], facts=[{"source": "A"}])
    message = caught.value.message
    assert "entities[0].type" in message and "facts[0].target" in message
    assert "facts[0].confidence" in message


def test_unknown_memory_is_refused_with_the_existing_names(engine):
    with pytest.raises(NotFound, match="unknown memory 'prod'; this account has: default"):
        engine.write(memory="prod", entities=ALICE_BOB)


def test_event_times_are_kept_beside_the_record_time(engine):
    out = engine.write(entities=ALICE_BOB, assume_new=True, facts=[
        fact("Alice", "Bob", "managed", "Alice managed Bob in 2023",
             valid_at="2023-01-01T00:00:00", invalid_at="2023-12-31T23:00:00+01:00")])
    row = Fact.objects.get(pk=out["edges_created"][0]["fact_id"])
    assert row.valid_at.isoformat() == "2023-01-01T00:00:00+00:00"
    assert row.invalid_at.isoformat() == "2023-12-31T22:00:00+00:00"
    assert row.created_at > row.invalid_at


def test_a_failure_midway_leaves_nothing_behind(engine, monkeypatch):
    from memories.graph import services

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    # The audit chain is appended after the rows are in.
    monkeypatch.setattr(services, "append", explode)
    with pytest.raises(RuntimeError):
        engine.write(entities=ALICE_BOB, assume_new=True,
                     facts=[fact("Alice", "Bob", "manages", "Alice manages Bob")])
    assert rows() == (0, 0, 0, 0)


def test_every_change_is_audited_with_the_session(engine):
    first = engine.write(session_id="s-1", entities=ALICE_BOB, assume_new=True,
                         facts=[fact("Alice", "Bob", "manages", "Alice manages Bob")])
    engine.write(session_id="s-2", entities=ALICE_BOB,
                 facts=[fact("Alice", "Bob", "manages", "Carol manages Bob now")])
    log = engine.audit()["events"]
    assert [(e["action"], e["session_id"]) for e in log] == [
        ("entity.created", "s-1"), ("entity.created", "s-1"), ("fact.created", "s-1"),
        ("fact.superseded", "s-2"), ("fact.created", "s-2")]
    superseded = log[3]
    assert superseded["object_id"] == first["edges_created"][0]["fact_id"]
    assert superseded["before"]["fact"] == "Alice manages Bob"
    assert superseded["after"]["superseded_by"] == log[4]["object_id"]
    assert log[4]["actor"] == {"holder_id": engine.principal.holder_id, "tool": "claude-code"}
