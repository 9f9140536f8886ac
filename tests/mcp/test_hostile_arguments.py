"""Hostile tool arguments (issue 8, reproductions 1-4): refused by field, nothing stored.

Every case runs through both doors, /mcp tools/call and POST /api/v1/tools/<tool>: one
argument model validates both, and both must refuse the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection

from audit.models import AuditEvent
from audit.verify import audit_verify
from memories.models import Entity, Episode, Fact, RecallSave

DOORS = ["mcp", "rest"]


@dataclass
class Reply:
    ok: bool
    body: dict[str, Any]
    error: dict[str, Any] | None


@pytest.fixture(params=DOORS)
def call(request, mcp_for, client, alice):
    """call(tool, arguments) as alice, through the door of the parameter."""
    if request.param == "mcp":
        session = mcp_for(alice)

        def via_mcp(tool: str, arguments: Any) -> Reply:
            response = session.request("tools/call", {"name": tool, "arguments": arguments})
            assert response.status_code == 200, response.content
            result = response.json()["result"]
            return Reply(not result["isError"], result, result.get("error"))

        return via_mcp

    def via_rest(tool: str, arguments: Any) -> Reply:
        response = client.post(f"/api/v1/tools/{tool}", data=json.dumps(arguments),
                               content_type="application/json", headers={
                                   "Authorization": f"Bearer {alice.plaintext}"})
        assert response.status_code < 500, response.content
        assert response["Content-Type"] == "application/json"
        body = response.json()
        return Reply(response.status_code == 200, body, body.get("error"))

    return via_rest


def stored_rows() -> dict[str, int]:
    return {"facts": Fact.objects.count(), "entities": Entity.objects.count(),
            "episodes": Episode.objects.count(), "saves": RecallSave.objects.count(),
            "audit": AuditEvent.objects.count()}


def refused(reply: Reply, field: str) -> dict[str, Any]:
    assert not reply.ok, reply.body
    assert reply.error["field"] == field, reply.error
    assert reply.error["fix"]
    return reply.error


def episode(facts=None, entities=None, **extra) -> dict[str, Any]:
    return {"scope": "shared", "assume_new": True,
            "entities": entities if entities is not None else [
                {"name": "Ada", "type": "person"}, {"name": "Acme", "type": "company"}],
            "facts": facts if facts is not None else [
                {"source": "Ada", "target": "Acme", "relation_type": "works_at",
                 "fact": "Ada works at Acme.", "confidence": "extracted"}],
            **extra}


# 1. Dates that Postgres stores but psycopg cannot read back.

UNREADABLE = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00",
              "9999-12-31T23:00:00-01:00"]


@pytest.mark.parametrize("when", UNREADABLE)
@pytest.mark.parametrize("field", ["valid_at", "invalid_at"])
def test_a_fact_time_outside_years_1_to_9999_in_utc_is_refused_and_nothing_stored(
        call, when, field):
    before = stored_rows()
    fact = episode()["facts"][0] | {field: when}
    error = refused(call("write_episode", episode(facts=[fact])), f"facts[0].{field}")
    assert "years 1 to 9999" in error["message"]
    assert stored_rows() == before


@pytest.mark.parametrize("when", UNREADABLE)
@pytest.mark.parametrize(("tool", "field", "extra"), [
    ("query_memory", "as_of", {"query": "Ada"}),
    ("get_audit_log", "since", {}),
])
def test_every_time_argument_is_checked_the_same_way(call, tool, field, extra, when):
    refused(call(tool, {"scope": "shared", field: when, **extra}), field)


@pytest.mark.parametrize("when", ["2024-01-01T00:00:00+16:00", "2024-01-01T00:00:00-23:59"])
@pytest.mark.parametrize(("tool", "field", "extra"), [
    ("query_memory", "as_of", {"query": "Ada"}),
    ("get_audit_log", "since", {}),
])
def test_offsets_python_reads_but_postgres_does_not_are_taken_in_utc(call, tool, field, extra,
                                                                     when):
    """Found by the fuzz suite: +16:00 reached PostgreSQL, which takes offsets to ±15:59."""
    assert call(tool, {"scope": "shared", field: when, **extra}).ok


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59+00:00", "0001-01-01T00:00:00+00:00",
                                  "9999-12-31T23:59:59+14:00", "2024-01-01T00:00:00+20:00"])
def test_the_extreme_times_that_can_be_read_back_are_stored_and_read(call, when):
    fact = episode()["facts"][0] | {"valid_at": when}
    assert call("write_episode", episode(facts=[fact])).ok
    found = call("query_memory", {"scope": "shared", "query": "Ada works at Acme"})
    assert found.ok
    assert found.body["facts"][0]["fact"] == "Ada works at Acme."
    assert found.body["facts"][0]["valid_at"] is not None


# 2. NUL (and lone surrogates) in any text argument.

def _with(arguments: dict[str, Any], path: str, value: str) -> dict[str, Any]:
    """A copy of `arguments` with the text at `path` (a.b[0].c) set to contain `value`."""
    arguments = json.loads(json.dumps(arguments))
    node: Any = arguments
    steps = path.replace("[", ".[").split(".")
    for step in steps[:-1]:
        node = node[int(step[1:-1])] if step.startswith("[") else node[step]
    last = steps[-1]
    key: Any = int(last[1:-1]) if last.startswith("[") else last
    node[key] = f"a{value}b"
    return arguments


TEXT_FIELDS = [
    ("write_episode", episode(session_id="s", project="p"), "session_id"),
    ("write_episode", episode(session_id="s", project="p"), "project"),
    ("write_episode", episode(), "memory"),
    ("write_episode", episode(), "entities[0].name"),
    ("write_episode", episode(), "entities[1].type"),
    ("write_episode", episode(), "facts[0].relation_type"),
    ("write_episode", episode(), "facts[0].fact"),
    ("query_memory", {"scope": "shared", "query": "Ada"}, "query"),
    ("query_memory", {"scope": "shared", "query": "Ada"}, "memory"),
    ("trace_cause", {"scope": "shared", "subject": "Ada"}, "subject"),
    ("record_recall_save", {"scope": "shared", "fact_id": "00000000-0000-4000-8000-000000000000",
                            "note": "saved a question"}, "note"),
    ("record_recall_save", {"scope": "shared", "fact_id": "00000000-0000-4000-8000-000000000000",
                            "note": "saved", "session_id": "s"}, "session_id"),
    ("get_audit_log", {"scope": "shared", "cursor": "c2VxOjE"}, "cursor"),
]


@pytest.mark.parametrize("character", ["\u0000", "\ud800", "\udfff"])
@pytest.mark.parametrize(("tool", "arguments", "path"), TEXT_FIELDS)
def test_text_the_database_cannot_hold_is_refused_naming_its_field(
        call, tool, arguments, path, character):
    before = stored_rows()
    error = refused(call(tool, _with(arguments, path, character)), path)
    assert ("NUL" if character == "\u0000" else "surrogate") in error["message"]
    assert stored_rows() == before


@pytest.mark.parametrize(("unknown", "field"), [("", "['']"), ("top k", "['top k']"),
                                                ("topk", "topk")])
def test_an_unknown_argument_is_named_however_it_is_spelled(call, unknown, field):
    """Found by the fuzz suite: an argument named "" was refused without a field."""
    error = refused(call("query_memory", {"scope": "shared", "query": "x", unknown: 1}), field)
    assert "unknown argument" in error["message"]


def test_a_nul_in_an_entity_resolutions_key_is_refused(call):
    arguments = episode(assume_new=False, entity_resolutions={"Ada\u0000": "new"})
    error = refused(call("write_episode", arguments), "entity_resolutions['Ada\\x00']")
    assert "NUL" in error["message"]


@pytest.mark.parametrize(("arguments", "field"), [
    ({"scope": "solo", "\ud800": "x"}, "['\\ud800']"),
    ({"scope": "solo", "x\u0000": "x"}, "['x\\x00']"),
    ({"scope": "solo", "cursor": None, "deep": [{"\udfff": 1}]}, "deep[0]['\\udfff']"),
])
def test_an_argument_name_that_is_not_storable_text_is_refused_by_name(call, arguments, field):
    """Found by the fuzz suite: a key that was a lone surrogate was refused without a field."""
    error = refused(call("get_audit_log", arguments), field)
    assert "the name contains" in error["message"]


# 3. Names that grow under normalization, and names of many words.

@pytest.mark.parametrize("name", ["ß" * 300, "\ufdfa" * 200, "ﬃ" * 200])
def test_a_name_longer_than_its_column_once_normalized_is_refused(call, name):
    before = stored_rows()
    entities = [{"name": name, "type": "thing"}, {"name": "Acme", "type": "company"}]
    facts = [{"source": name, "target": "Acme", "relation_type": "r", "fact": "f",
              "confidence": "extracted"}]
    error = refused(call("write_episode", episode(facts=facts, entities=entities)),
                    "entities[0].name")
    assert "normalized" in error["message"]
    assert stored_rows() == before


def test_a_name_of_many_words_is_stored_without_initials(call):
    name = " ".join(f"w{i}" for i in range(120))
    entities = [{"name": name, "type": "thing"}, {"name": "Acme", "type": "company"}]
    facts = [{"source": name, "target": "Acme", "relation_type": "r", "fact": "Many words.",
              "confidence": "extracted"}]
    assert call("write_episode", episode(facts=facts, entities=entities)).ok
    assert Entity.objects.get(name=name).initials == ""


# 4. The same entity listed twice in one episode.

@pytest.mark.parametrize("twice", [
    [{"name": "Ada", "type": "person"}, {"name": "Ada", "type": "person"}],
    [{"name": "Ada", "type": "person"}, {"name": "Ada ", "type": "person"}],
    [{"name": "Ada", "type": "person"}, {"name": "ADA", "type": "Person"}],
])
def test_an_entity_listed_twice_the_same_way_is_stored_once(call, twice):
    entities = [*twice, {"name": "Acme", "type": "company"}]
    facts = [{"source": twice[-1]["name"].strip(), "target": "Acme", "relation_type": "works_at",
              "fact": "Ada works at Acme.", "confidence": "extracted"}]
    reply = call("write_episode", episode(facts=facts, entities=entities))
    assert reply.ok, reply.body
    assert reply.body["stored"] is True
    assert Entity.objects.filter(name="Ada").count() == 1
    assert Entity.objects.count() == 2
    assert len(reply.body["edges_created"]) == 1
    assert audit_verify(Entity.objects.get(name="Ada").memory.account_id) == (True, None)


def test_one_name_listed_with_two_types_is_refused_naming_both_listings(call):
    before = stored_rows()
    entities = [{"name": "Mercury", "type": "planet"}, {"name": "Acme", "type": "company"},
                {"name": "mercury", "type": "element"}]
    error = refused(call("write_episode", episode(facts=[], entities=entities)), "entities[2]")
    assert "entities[0] and entities[2]" in error["message"]
    assert stored_rows() == before


def test_two_facts_that_meet_on_one_edge_once_names_resolve_are_refused(call):
    assert call("write_episode", episode()).ok
    acme = Entity.objects.get(name="Acme")
    before = stored_rows()
    # "ACME Corp" is resolved to the existing Acme node, so both facts are Ada -> Acme.
    entities = [{"name": "Ada", "type": "person"}, {"name": "Acme", "type": "company"},
                {"name": "ACME Corp", "type": "company"}]
    facts = [{"source": "Ada", "target": "Acme", "relation_type": "advises",
              "fact": "Ada advises Acme.", "confidence": "extracted"},
             {"source": "Ada", "target": "ACME Corp", "relation_type": "advises",
              "fact": "Ada advises ACME Corp.", "confidence": "extracted"}]
    reply = call("write_episode", episode(facts=facts, entities=entities, assume_new=False,
                                          entity_resolutions={"ACME Corp": str(acme.pk)}))
    error = refused(reply, "facts[1]")
    assert "facts[0] and facts[1]" in error["message"]
    assert stored_rows() == before


def test_refusals_leave_the_connection_usable(call):
    """A refusal mid-episode rolls back cleanly: the next call on the same worker works."""
    bad = episode()["facts"][0] | {"valid_at": UNREADABLE[0]}
    assert not call("write_episode", episode(facts=[bad])).ok
    assert call("write_episode", episode()).ok
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_fact")
        assert cursor.fetchone()[0] == 1
