"""Two clocks: `as_of` (what the memory held then) and `valid_as_of` (what was true then).

The story: Alice's job at Acme was first recorded as ongoing since 2019; later the memory
learned she left in mid-2021 (the same edge, rewritten, so the first version is superseded)
and joined Globex. Each question is asked through both read paths (the word and vector
search, and the digest), which build their filter in different SQL.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from echomem.errors import ValidationFailed
from tests.engine.test_query_plans import graph, plan_of  # noqa: F401  (the 4,000-fact fixture)
from tests.factories import Engine, fact, person
from tests.mcp.conftest import Mcp

PEOPLE = [person("Alice"), {"name": "Acme", "type": "company"},
          {"name": "Globex", "type": "company"}]
ONGOING = "Alice works at Acme as an engineer"
ENDED = "Alice worked at Acme from 2019 until she left in June 2021"
GLOBEX = "Alice joined Globex in July 2021"


def iso(year: int, month: int = 1, day: int = 1) -> str:
    return datetime(year, month, day, tzinfo=UTC).isoformat()


@pytest.fixture
def career(engine) -> dict[str, object]:
    engine.write(entities=PEOPLE, assume_new=True, facts=[
        fact("Alice", "Acme", "works_at", ONGOING, valid_at=iso(2019, 3, 1))])
    time.sleep(0.01)
    between = timezone.now()
    time.sleep(0.01)
    engine.write(entities=PEOPLE, facts=[
        fact("Alice", "Acme", "works_at", ENDED, valid_at=iso(2019, 3, 1),
             invalid_at=iso(2021, 6, 30)),
        fact("Alice", "Globex", "works_at", GLOBEX, valid_at=iso(2021, 7, 1))])
    Engine.index()
    return {"engine": engine, "between": between.isoformat()}


def answers(engine: Engine, **times) -> set[str]:
    """The facts a question about Alice gets, checked to be the same on both read paths."""
    searched = {f["fact"] for f in engine.query("Alice", top_k=100, **times)["facts"]}
    digest = {f["fact"] for f in engine.query(digest=True, top_k=100, **times)["facts"]}
    assert searched == digest, (searched, digest)
    return searched


def test_without_a_clock_the_live_facts_answer(career):
    assert answers(career["engine"]) == {ENDED, GLOBEX}


def test_as_of_answers_what_the_memory_held_then(career):
    # Unchanged meaning: at that moment the memory knew only the ongoing job.
    assert answers(career["engine"], as_of=career["between"]) == {ONGOING}


def test_valid_as_of_answers_what_was_true_then(career):
    engine = career["engine"]
    assert answers(engine, valid_as_of=iso(2020)) == {ENDED}
    assert answers(engine, valid_as_of=iso(2023)) == {GLOBEX}
    assert answers(engine, valid_as_of=iso(2018)) == set()


def test_the_two_clocks_give_different_answers_to_the_same_question(career):
    engine = career["engine"]
    # What the memory believed back then about 2023: still at Acme (it had not heard).
    assert answers(engine, as_of=career["between"], valid_as_of=iso(2023)) == {ONGOING}
    assert answers(engine, valid_as_of=iso(2023)) == {GLOBEX}
    # And about 2018, before the job began: nothing, where as_of alone says Acme.
    assert answers(engine, as_of=career["between"], valid_as_of=iso(2018)) == set()
    assert answers(engine, as_of=career["between"]) == {ONGOING}


def test_a_replaced_version_is_true_until_its_replacement_begins(engine):
    engine.write(entities=PEOPLE, assume_new=True, facts=[
        fact("Alice", "Acme", "role", "Alice is a junior engineer at Acme",
             valid_at=iso(2018))])
    engine.write(entities=PEOPLE, facts=[
        fact("Alice", "Acme", "role", "Alice is a senior engineer at Acme",
             valid_at=iso(2022))])
    assert answers(engine, valid_as_of=iso(2020)) == {"Alice is a junior engineer at Acme"}
    assert answers(engine, valid_as_of=iso(2023)) == {"Alice is a senior engineer at Acme"}


def test_a_fact_without_valid_at_is_true_from_when_it_was_recorded(engine):
    before = timezone.now()
    time.sleep(0.01)
    engine.write(entities=PEOPLE, assume_new=True, facts=[
        fact("Alice", "Globex", "likes", "Alice likes the Globex cafeteria")])
    assert answers(engine, valid_as_of=before.isoformat()) == set()
    assert answers(engine, valid_as_of=timezone.now().isoformat()) == {
        "Alice likes the Globex cafeteria"}
    # A replacement without valid_at takes over from the moment it was written.
    time.sleep(0.01)
    replaced_after = timezone.now()
    time.sleep(0.01)
    engine.write(entities=PEOPLE, facts=[
        fact("Alice", "Globex", "likes", "Alice no longer likes the Globex cafeteria")])
    assert answers(engine, valid_as_of=replaced_after.isoformat()) == {
        "Alice likes the Globex cafeteria"}
    assert answers(engine, valid_as_of=timezone.now().isoformat()) == {
        "Alice no longer likes the Globex cafeteria"}


def test_an_end_is_exclusive_and_a_start_inclusive(career):
    engine = career["engine"]
    assert answers(engine, valid_as_of=iso(2021, 6, 30)) == set()
    assert answers(engine, valid_as_of=iso(2021, 7, 1)) == {GLOBEX}


def test_trace_cause_takes_both_clocks(engine):
    things = [{"name": "checkout latency", "type": "symptom"},
              {"name": "cache stampede", "type": "cause"}]
    engine.write(entities=things, assume_new=True, facts=[
        fact("checkout latency", "cache stampede", "explained_by",
             "Checkout latency was caused by a cache stampede", causal_hint="caused_by",
             valid_at=iso(2022, 3, 1), invalid_at=iso(2022, 9, 1))])
    written = timezone.now()

    def causes(**times) -> list[str]:
        reply = engine.trace("checkout latency", direction="upstream", **times)
        return [link["fact"] for chain in reply["causes"] for link in chain]

    assert causes() == ["Checkout latency was caused by a cache stampede"]
    assert causes(valid_as_of=iso(2022, 6)) == causes()
    assert causes(valid_as_of=iso(2023)) == []
    assert engine.trace("checkout latency", valid_as_of=iso(2023))["empty_reason"] == \
        "no_causal_links"
    assert causes(as_of=iso(2020)) == []
    assert causes(as_of=written.isoformat(), valid_as_of=iso(2022, 6)) == causes()


@pytest.mark.parametrize("tool", ["query", "trace"])
@pytest.mark.parametrize(("value", "needle"), [
    ("last tuesday", "ISO 8601"),
    ("9999-12-31T23:59:59-14:00", "years 1 to 9999"),
    ("2024-13-01T00:00:00Z", "ISO 8601"),
])
def test_a_bad_valid_as_of_is_refused_naming_the_field_and_the_fix(engine, tool, value, needle):
    with pytest.raises(ValidationFailed) as caught:
        getattr(engine, tool)("Alice", valid_as_of=value)
    assert caught.value.field == "valid_as_of"
    assert needle in caught.value.message


def test_mcp_declares_and_answers_valid_as_of(client, alice):
    mcp = Mcp(client, alice.plaintext)
    mcp.initialize()
    listed = {t["name"]: t for t in mcp.request("tools/list").json()["result"]["tools"]}
    for name in ("query_memory", "trace_cause"):
        properties = listed[name]["inputSchema"]["properties"]
        assert {"as_of", "valid_as_of"} <= set(properties)
        assert "true in the world" in properties["valid_as_of"]["description"]
    Engine(alice.principal).write(entities=PEOPLE, assume_new=True, facts=[
        fact("Alice", "Acme", "works_at", ENDED, valid_at=iso(2019, 3, 1),
             invalid_at=iso(2021, 6, 30))])

    def recall(when: str) -> list[str]:
        result = mcp.call("query_memory", {"scope": "shared", "query": "Alice",
                                           "valid_as_of": when})["result"]
        return [f["fact"] for f in result["facts"]]

    assert recall(iso(2020)) == [ENDED]
    assert recall(iso(2022)) == []
    refused = mcp.call("query_memory", {"scope": "shared", "query": "Alice",
                                        "valid_as_of": "soon"})["result"]
    assert refused["isError"] is True
    assert refused["error"]["field"] == "valid_as_of"


def test_rest_takes_the_same_argument(client, alice):
    def post(body):
        return client.post("/api/v1/tools/query_memory", data=body,
                           content_type="application/json",
                           headers={"Authorization": f"Bearer {alice.plaintext}"})

    Engine(alice.principal).write(entities=PEOPLE, assume_new=True, facts=[
        fact("Alice", "Acme", "works_at", ENDED, valid_at=iso(2019, 3, 1),
             invalid_at=iso(2021, 6, 30))])
    then = post({"scope": "shared", "query": "Alice", "valid_as_of": iso(2020)}).json()
    assert [f["fact"] for f in then["facts"]] == [ENDED]
    assert post({"scope": "shared", "query": "Alice", "valid_as_of": iso(2022)}).json()[
        "facts"] == []
    bad = post({"scope": "shared", "query": "Alice", "valid_as_of": "0001-01-01T00:00:00+14:00"})
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "valid_as_of"
    assert "years 1 to 9999" in bad.json()["error"]["message"]
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    assert "valid_as_of" in str(schema)


def test_reads_on_either_clock_keep_their_indexes(graph):  # noqa: F811
    """The time filter is checked on the rows an index yields; it must not push the planner
    onto a scan of the memory (trace_cause did that per hop before the causal indexes
    covered replaced links). The digest with a clock reads the memory once, as as_of did."""
    with connection.cursor() as cursor:
        # Event times on the filler facts, some already ended, as a real history has
        # (setup: like the fixture's insert, free of the statement timeout on a busy box).
        cursor.execute("SET LOCAL statement_timeout = 0")
        cursor.execute("UPDATE memories_fact SET valid_at = created_at - interval '400 days', "
                       "invalid_at = CASE WHEN random() < 0.3 THEN created_at END")
        cursor.execute("ANALYZE memories_fact")
        cursor.execute(f"SET LOCAL statement_timeout = {int(settings.STATEMENT_TIMEOUT_MS)}")
    clocks = [{"valid_as_of": iso(2026, 6)},
              {"valid_as_of": iso(2026, 6), "as_of": timezone.now().isoformat()},
              {"as_of": timezone.now().isoformat()}]
    failures = []
    for times in clocks:
        checks = [
            (lambda t=times: graph.query("who climbs", **t), "embedding <=>", "fact_embedding"),
            (lambda t=times: graph.query("climbing gym", **t), "WITH candidates AS",
             "fact_search_vector"),
            (lambda t=times: graph.trace("outage", direction="upstream", **t), "causal_hint",
             "fact_causal_"),
        ]
        for run, marker, index in checks:
            plan = plan_of(run, marker)
            if index not in plan:
                failures.append(f"{times} {marker}: no {index}:\n{plan}")
    assert not failures, "\n\n".join(failures)
