"""The audit log (append-only, hash-chained, paged) and recall saves."""

from __future__ import annotations

import time

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit.models import AuditEvent
from audit.verify import audit_verify
from echomem.errors import ValidationFailed
from memories.models import RecallSave
from tests.factories import Engine, fact, person


def write_some(engine: Engine, count: int, session: str = "s") -> list[str]:
    out = engine.write(session_id=session, assume_new=True,
                       entities=[person(f"P{i}") for i in range(count + 1)],
                       facts=[fact(f"P{i}", f"P{i + 1}", "knows", f"P{i} knows P{i + 1}")
                              for i in range(count)])
    return [e["fact_id"] for e in out["edges_created"]]


def test_the_chain_verifies_and_detects_a_forged_row(engine, alice):
    write_some(engine, 3)
    assert audit_verify(alice.account.pk) == (True, None)
    # A superuser can switch triggers off; the chain still tells.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE memories_auditevent SET after = '{\"name\": \"Mallory\"}' "
                       "WHERE account_id = %s AND seq = 2", [alice.account.pk])
        cursor.execute("SET LOCAL session_replication_role = origin")
    assert audit_verify(alice.account.pk) == (False, 2)


def test_a_deleted_last_row_is_detected(engine, alice):
    write_some(engine, 2)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL echo_memory.erasing_account = 'on'")
        cursor.execute("DELETE FROM memories_auditevent WHERE account_id = %s AND seq = "
                       "(SELECT max(seq) FROM memories_auditevent WHERE account_id = %s)",
                       [alice.account.pk, alice.account.pk])
    assert audit_verify(alice.account.pk)[0] is False


@pytest.mark.parametrize("statement", [
    "UPDATE memories_auditevent SET action = 'x'",
    "DELETE FROM memories_auditevent",
])
def test_audit_rows_cannot_be_changed_or_deleted(engine, statement):
    write_some(engine, 1)
    events = AuditEvent.objects.count()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute(statement)
    assert AuditEvent.objects.count() == events


def test_accounts_have_separate_chains(engine, charlie, alice):
    write_some(engine, 2)
    Engine(charlie.principal).write(entities=[person("Z")], assume_new=True)
    charlie_seqs = (AuditEvent.objects.filter(account=charlie.account).order_by("pk")
                    .values_list("seq", flat=True))
    # memory.created (default) and key.created, then the write, in charlie's own chain.
    assert list(charlie_seqs) == [1, 2, 3]
    assert audit_verify(alice.account.pk) == (True, None)
    assert audit_verify(charlie.account.pk) == (True, None)


def test_the_log_pages_with_a_cursor_and_filters_by_time(engine):
    # The account's own events (memory.created, key.created) come first in the chain and are
    # not in an agent's log.
    s = AuditEvent.objects.filter(account_id=engine.principal.account_id).count()
    write_some(engine, 4, session="early")
    cut = timezone.now()
    time.sleep(0.01)
    engine.write(session_id="late", entities=[person("P0"), person("P1")],
                 facts=[fact("P0", "P1", "knows", "P0 knows P1 well")])
    first = engine.audit(limit=4)
    assert [e["seq"] - s for e in first["events"]] == [1, 2, 3, 4]
    second = engine.audit(limit=4, cursor=first["next_cursor"])
    assert [e["seq"] - s for e in second["events"]] == [5, 6, 7, 8]
    rest = engine.audit(limit=4, cursor=second["next_cursor"])
    assert [e["seq"] - s for e in rest["events"]] == [9, 10, 11]
    assert rest["next_cursor"] is None
    late = engine.audit(since=cut.isoformat())["events"]
    assert {e["session_id"] for e in late} == {"late"}
    assert [e["action"] for e in late] == ["fact.superseded", "fact.created"]


def test_a_foreign_cursor_is_refused(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.audit(cursor="not-a-cursor")
    assert caught.value.field == "cursor"


def test_recall_save_reads_the_writer_off_the_edge_and_the_reader_off_the_key(engine, bob):
    [fact_id] = write_some(engine, 1)
    reader = Engine(bob.principal)
    out = reader.save(fact_id=fact_id, note="Saved re-explaining the team chart",
                      session_id="bob-chat")
    assert out["writer"] == {"holder_id": engine.principal.holder_id, "tool": "claude-code"}
    assert out["reader"] == {"holder_id": bob.user.pk, "tool": "support-bot"}
    save = RecallSave.objects.get()
    assert (save.writer_tool, save.reader_tool) == ("claude-code", "support-bot")
    assert save.note == "Saved re-explaining the team chart"
    event = reader.audit()["events"][-1]
    assert event["action"] == "recall_save.recorded" and event["session_id"] == "bob-chat"


def test_recall_save_does_not_accept_a_caller_asserted_writer(engine):
    [fact_id] = write_some(engine, 1)
    with pytest.raises(ValidationFailed) as caught:
        engine.save(fact_id=fact_id, note="x", writer="someone-else")
    assert caught.value.field == "writer"


def test_recall_save_needs_a_real_fact_id(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.save(fact_id="12", note="x")
    assert caught.value.field == "fact_id"
