"""Repairing facts whose dates were stored outside what Python can read (years 1..9999 UTC).

Each test poisons facts the way the old input check let through: written normally,
then given a date such as 9999-12-31T23:59:59-14:00 (year 10000 in UTC) by raw SQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import DataError, connection

from accounts.audit_chains import audit_verify_accounts
from audit.models import AuditEvent
from audit.verify import audit_verify
from echomem.errors import NotFound
from memories.erasure.repair import REPAIR_TOOL, repair_unreadable_dates
from memories.graph.services import memory_create
from memories.models import Fact
from tests.factories import Engine, fact, person

YEAR_10000 = "9999-12-31T23:59:59-14:00"     # 10000-01-01 13:59:59 UTC
YEAR_1_BC = "0001-01-01T00:00:00+14:00"      # 0001-12-31 10:00:00 UTC, 1 BC
YEAR_10000_TEXT = "10000-01-01 13:59:59+00"
YEAR_1_BC_TEXT = "0001-12-31 10:00:00+00 BC"
MAY_2024 = datetime(2024, 5, 1, tzinfo=UTC)
JAN_2023 = datetime(2023, 1, 1, tzinfo=UTC)


def poison(fact_id: str, **dates: str) -> None:
    sets = ", ".join(f"{column} = %s::timestamptz" for column in dates)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE memories_fact SET {sets} WHERE id = %s",
                       [*dates.values(), fact_id])


def digest(engine: Engine) -> dict:
    return engine.query(digest=True, include_superseded=True, top_k=100)


def repair_events(account) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(account=account, action="fact.date_repaired")
                .order_by("seq"))


@pytest.fixture
def poisoned(engine) -> dict[str, str]:
    """Alice's memory with one fact per kind of damage, a superseded one and a healthy one."""
    written = engine.write(assume_new=True, entities=[person(n) for n in "ABCDEF"], facts=[
        fact("A", "B", "mentors", "A mentors B", valid_at=MAY_2024.isoformat(),
             causal_hint="led_to"),
        fact("B", "C", "mentors", "B mentors C", invalid_at=JAN_2023.isoformat()),
        fact("C", "D", "mentors", "C mentors D"),
        fact("D", "E", "mentors", "D mentors E", valid_at=MAY_2024.isoformat()),
        fact("E", "F", "mentors", "E mentored F once"),
    ])
    ids = [edge["fact_id"] for edge in written["edges_created"]]
    rewritten = engine.write(entities=[person("E"), person("F")],
                             facts=[fact("E", "F", "mentors", "E mentors F again")])
    facts = {"late_end": ids[0], "early_start": ids[1], "both": ids[2], "healthy": ids[3],
             "superseded": ids[4], "current": rewritten["edges_created"][0]["fact_id"]}
    poison(facts["late_end"], invalid_at=YEAR_10000)
    poison(facts["early_start"], valid_at=YEAR_1_BC)
    poison(facts["both"], valid_at=YEAR_1_BC, invalid_at=YEAR_10000)
    poison(facts["superseded"], valid_at=YEAR_10000)
    return facts


def test_a_poisoned_fact_breaks_reads_until_repaired(engine, alice, poisoned):
    with pytest.raises(DataError):
        digest(engine)
    with pytest.raises(DataError):
        engine.trace("A")

    [repair] = repair_unreadable_dates()

    assert (repair.account_id, repair.account_name) == (alice.account.pk, "Alice's team")
    assert {f.fact_id for f in repair.facts} == {
        poisoned["late_end"], poisoned["early_start"], poisoned["both"], poisoned["superseded"]}
    shown = {f["fact_id"]: f for f in digest(engine)["facts"]}
    assert len(shown) == 6
    late_end, early_start = shown[poisoned["late_end"]], shown[poisoned["early_start"]]
    assert (late_end["fact"], late_end["valid_at"], late_end["invalid_at"]) == (
        "A mentors B", MAY_2024, None)
    assert (early_start["fact"], early_start["valid_at"], early_start["invalid_at"]) == (
        "B mentors C", None, JAN_2023)
    assert (shown[poisoned["both"]]["valid_at"], shown[poisoned["both"]]["invalid_at"]) == (
        None, None)
    superseded = shown[poisoned["superseded"]]
    assert superseded["fact"] == "E mentored F once" and superseded["valid_at"] is None
    assert superseded["superseded_by"] == poisoned["current"]
    assert shown[poisoned["healthy"]]["valid_at"] == MAY_2024
    [[effect]] = engine.trace("A")["effects"]
    assert (effect["fact_id"], effect["invalid_at"]) == (poisoned["late_end"], None)


def test_each_repaired_fact_gets_one_audit_event_with_the_unreadable_text(
        engine, alice, poisoned):
    before = AuditEvent.objects.filter(account=alice.account).count()
    repair_unreadable_dates()

    events = repair_events(alice.account)
    assert AuditEvent.objects.filter(account=alice.account).count() == before + 4
    assert {e.object_id: (e.before, e.after) for e in events} == {
        poisoned["late_end"]: ({"invalid_at": YEAR_10000_TEXT}, {"invalid_at": None}),
        poisoned["early_start"]: ({"valid_at": YEAR_1_BC_TEXT}, {"valid_at": None}),
        poisoned["both"]: ({"valid_at": YEAR_1_BC_TEXT, "invalid_at": YEAR_10000_TEXT},
                           {"valid_at": None, "invalid_at": None}),
        poisoned["superseded"]: ({"valid_at": YEAR_10000_TEXT}, {"valid_at": None}),
    }
    assert {(e.tool, e.holder_id, e.key_id, e.memory_name, e.partition) for e in events} == {
        (REPAIR_TOOL, None, None, "default", "shared")}
    assert audit_verify(alice.account.pk) == (True, None)
    # Agents see the repair in their own audit log.
    assert "fact.date_repaired" in [e["action"] for e in engine.audit(limit=100)["events"]]


def test_events_carry_each_facts_own_memory_and_partition(engine, alice):
    memory_create(account_id=alice.account.pk, name="work")
    [solo] = [e["fact_id"] for e in engine.write(
        memory="work", scope="solo", assume_new=True, entities=[person("A"), person("B")],
        facts=[fact("A", "B", "knows", "A knows B")])["edges_created"]]
    [shared] = [e["fact_id"] for e in engine.write(
        assume_new=True, entities=[person("A"), person("B")],
        facts=[fact("A", "B", "knows", "A knows B")])["edges_created"]]
    poison(solo, valid_at=YEAR_10000)
    poison(shared, invalid_at=YEAR_1_BC)

    repair_unreadable_dates()

    assert {(e.object_id, e.memory_name, e.partition) for e in repair_events(alice.account)} == {
        (solo, "work", engine.principal.solo_partition), (shared, "default", "shared")}
    assert engine.query(memory="work", scope="solo", digest=True)["facts"][0]["fact_id"] == solo
    assert audit_verify(alice.account.pk) == (True, None)


def test_a_dry_run_reports_without_changing_or_recording_anything(engine, alice, poisoned):
    events_before = AuditEvent.objects.count()

    [repair] = repair_unreadable_dates(dry_run=True)

    assert len(repair.facts) == 4
    both = next(f for f in repair.facts if f.fact_id == poisoned["both"])
    assert both.before == {"valid_at": YEAR_1_BC_TEXT, "invalid_at": YEAR_10000_TEXT}
    assert AuditEvent.objects.count() == events_before
    with pytest.raises(DataError):
        digest(engine)


def test_repairing_one_account_leaves_another_untouched(engine, alice, charlie, poisoned):
    theirs = Engine(charlie.principal)
    [their_fact] = [e["fact_id"] for e in theirs.write(
        assume_new=True, entities=[person("X"), person("Y")],
        facts=[fact("X", "Y", "supplies", "X supplies Y")])["edges_created"]]
    poison(their_fact, valid_at=YEAR_10000)

    [repair] = repair_unreadable_dates(account_id=alice.account.pk)

    assert repair.account_id == alice.account.pk
    assert digest(engine)["count"] == 6
    with pytest.raises(DataError):
        digest(theirs)
    assert repair_events(charlie.account) == []
    assert [r.account_id for r in repair_unreadable_dates()] == [charlie.account.pk]
    assert digest(theirs)["facts"][0]["fact"] == "X supplies Y"


def test_a_second_repair_finds_nothing(engine, alice, poisoned):
    assert len(repair_unreadable_dates()[0].facts) == 4
    events = AuditEvent.objects.count()
    assert repair_unreadable_dates() == []
    assert AuditEvent.objects.count() == events


def test_a_healthy_box_needs_no_repair(engine, alice):
    engine.write(assume_new=True, entities=[person("A"), person("B")], facts=[
        fact("A", "B", "knows", "A knows B", valid_at="0001-01-01T00:00:00Z",
             invalid_at="9999-12-31T23:59:59Z")])
    assert repair_unreadable_dates() == []
    assert Fact.objects.get().invalid_at == datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_an_unknown_account_is_refused(db):
    with pytest.raises(NotFound) as caught:
        repair_unreadable_dates(account_id=999_999)
    assert caught.value.field == "--account"
    with pytest.raises(NotFound):
        audit_verify_accounts(999_999)


def test_audit_verification_reports_every_account(engine, alice, charlie, poisoned):
    repair_unreadable_dates()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE memories_auditevent SET after = '{}' "
                       "WHERE account_id = %s AND seq = 3", [alice.account.pk])
        cursor.execute("SET LOCAL session_replication_role = origin")
    reports = audit_verify_accounts()
    assert [(r.account_id, r.ok, r.broken_seq) for r in reports] == [
        (alice.account.pk, False, 3), (charlie.account.pk, True, None)]
    assert [r.account_name for r in audit_verify_accounts(charlie.account.pk)] == [
        "Charlie's shop"]
