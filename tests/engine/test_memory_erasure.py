"""Deleting a memory erases its text everywhere, and the audit chain still verifies."""

from __future__ import annotations

import importlib

import pytest
from django.db import DatabaseError, connection

from audit.models import AuditChainHead, AuditEvent
from audit.verify import audit_verify
from echomem.errors import Forbidden, NotFound, ValidationFailed
from memories.erasure.services import memory_delete
from memories.graph.services import memory_create
from memories.models import Entity, Fact, Memory, RecallSave
from tests.engine.conftest import pg_dump as _pg_dump
from tests.factories import Engine, fact, person

convert = importlib.import_module("memories.migrations.0008_audit_chain_format_2")
# Words that appear only in the doomed memory, in each kind of text it holds.
DOOMED_WORDS = ("Quillfeather", "Zanzibarian", "marmalade-glacier", "Oberwocky")


def _write(engine: Engine, memory: str, people: tuple[str, str], text: str) -> dict:
    return engine.write(memory=memory, assume_new=True,
                        entities=[person(people[0]), person(people[1])],
                        facts=[fact(people[0], people[1], "mentors", text)])


@pytest.fixture
def two_memories(alice):
    engine = Engine(alice.principal)
    memory_create(account_id=alice.account.pk, name="doomed")
    memory_create(account_id=alice.account.pk, name="kept")
    first = _write(engine, "doomed", ("Quillfeather", "Zanzibarian"),
                   "Quillfeather taught Zanzibarian to make marmalade-glacier")
    # A second version of the same edge: the superseded one is in the audit trail too.
    _write(engine, "doomed", ("Quillfeather", "Zanzibarian"),
           "Quillfeather taught Zanzibarian the Oberwocky recipe")
    engine.save(memory="doomed", fact_id=first["edges_created"][0]["fact_id"],
                note="Oberwocky saved a re-explanation")
    _write(engine, "kept", ("Maplethorpe", "Dunraven"), "Maplethorpe coaches Dunraven")
    Engine.index()
    return engine


@pytest.mark.django_db(transaction=True)
def test_a_deleted_memory_leaves_no_text_in_a_dump_and_the_chain_verifies(alice, two_memories):
    doomed = Memory.objects.get(name="doomed")
    events_before = AuditEvent.objects.filter(account=alice.account).count()
    of_doomed = AuditEvent.objects.filter(account=alice.account, memory_id=doomed.pk).count()
    before_dump = _pg_dump()
    assert all(word in before_dump for word in DOOMED_WORDS)

    deleted = memory_delete(alice.principal, "doomed", confirm="doomed")

    assert deleted["facts"] == 2 and deleted["entities"] == 2 and deleted["episodes"] == 2
    assert not Memory.objects.filter(pk=doomed.pk).exists()
    assert not Fact.objects.filter(memory_id=doomed.pk).exists()
    assert not Entity.objects.filter(memory_id=doomed.pk).exists()
    assert not RecallSave.objects.filter(memory_id=doomed.pk).exists()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM")
    dump = _pg_dump()
    assert [word for word in DOOMED_WORDS if word in dump] == []
    assert "Maplethorpe coaches Dunraven" in dump

    # Nothing was removed from the trail: the same events plus one, numbered without gaps.
    seqs = list(AuditEvent.objects.filter(account=alice.account).order_by("seq")
                .values_list("seq", flat=True))
    assert seqs == list(range(1, events_before + 2))
    last = AuditEvent.objects.get(account=alice.account, seq=seqs[-1])
    assert last.action == "memory.deleted" and last.before["name"] == "doomed"
    erased = AuditEvent.objects.filter(account=alice.account, memory_id=doomed.pk,
                                       salt__isnull=True)
    assert erased.count() == deleted["audit_events_erased"] == of_doomed
    assert erased.filter(action="memory.created").count() == 1  # its name went too
    assert audit_verify(alice.account.pk) == (True, None)
    # The kept memory still works, and its trail still shows its text.
    assert Engine(alice.principal).query("Maplethorpe", memory="kept")["facts"]


def _tamper(sql: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER USER")
        try:
            cursor.execute(sql, params)
        finally:
            cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER USER")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("tampering", ["text", "digest", "erased without a deletion",
                                       "text put back in an erased event"])
def test_tampering_with_any_remaining_event_still_fails_verification(alice, two_memories,
                                                                     tampering):
    doomed = Memory.objects.get(name="doomed").pk
    memory_delete(alice.principal, "doomed", confirm="doomed")
    kept = AuditEvent.objects.filter(account=alice.account,
                                     memory_id=Memory.objects.get(name="kept").pk,
                                     action="fact.created").get()
    gone = AuditEvent.objects.filter(memory_id=doomed, action="fact.created").first()
    if tampering == "text":
        _tamper("UPDATE memories_auditevent SET after = jsonb_set(after, '{fact}', "
                "'\"Maplethorpe fired Dunraven\"') WHERE id = %s", [kept.pk])
        broken = kept.seq
    elif tampering == "digest":
        _tamper("UPDATE memories_auditevent SET payload_digest = repeat('0', 64) WHERE id = %s",
                [kept.pk])
        broken = kept.seq
    elif tampering == "erased without a deletion":
        _tamper("UPDATE memories_auditevent SET before = NULL, after = NULL, salt = NULL, "
                "erased_at = now() WHERE id = %s", [kept.pk])
        broken = kept.seq
    else:
        _tamper("UPDATE memories_auditevent SET after = '{\"fact\": \"invented\"}' "
                "WHERE id = %s", [gone.pk])
        broken = gone.seq
    assert audit_verify(alice.account.pk) == (False, broken)


@pytest.mark.django_db(transaction=True)
def test_the_trigger_allows_erasure_only_of_text_and_only_on_the_erasure_path(alice,
                                                                             two_memories):
    event = AuditEvent.objects.filter(account=alice.account).first()
    for sql in ("UPDATE memories_auditevent SET after = NULL WHERE id = %s",
                "UPDATE memories_auditevent SET before = NULL, after = NULL, salt = NULL, "
                "erased_at = now() WHERE id = %s",
                "DELETE FROM memories_auditevent WHERE id = %s"):
        with pytest.raises(DatabaseError, match="append-only"), connection.cursor() as cursor:
            cursor.execute(sql, [event.pk])
    # On the erasure path, changing anything beyond the text is still refused.
    with pytest.raises(DatabaseError, match="append-only"), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_erasing', 'on', false)")
        try:
            cursor.execute("UPDATE memories_auditevent SET before = NULL, after = NULL, "
                           "salt = NULL, erased_at = now(), action = 'x' WHERE id = %s",
                           [event.pk])
        finally:
            cursor.execute("SELECT set_config('echo_memory.audit_erasing', 'off', false)")


def test_deleting_needs_the_name_typed_an_owner_or_admin_and_the_account(alice, bob, charlie):
    memory_create(account_id=alice.account.pk, name="doomed")
    with pytest.raises(ValidationFailed) as refused:
        memory_delete(alice.principal, "doomed", confirm="doome")
    assert refused.value.field == "confirm"
    with pytest.raises(Forbidden):
        memory_delete(bob.principal, "doomed", confirm="doomed")  # a member
    with pytest.raises(NotFound):
        memory_delete(charlie.principal, "doomed", confirm="doomed")  # another account
    assert Memory.objects.filter(name="doomed", account=alice.account).exists()


@pytest.mark.django_db(transaction=True)
def test_chains_written_in_format_1_are_verified_and_converted(alice, two_memories):
    events = list(AuditEvent.objects.filter(account=alice.account).order_by("seq"))
    texts = {event.pk: (event.before, event.after) for event in events}
    _rewrite_as_format_1(alice.account.pk, events)
    assert audit_verify(alice.account.pk) == (True, None)  # format 1 still verifies

    converted = convert.convert_chains(AuditEvent, AuditChainHead)

    assert converted == len(events)
    after = list(AuditEvent.objects.filter(account=alice.account).order_by("seq"))
    assert {event.format for event in after} == {2}
    assert {event.pk: (event.before, event.after) for event in after} == texts
    assert audit_verify(alice.account.pk) == (True, None)
    memory_delete(alice.principal, "doomed", confirm="doomed")
    assert audit_verify(alice.account.pk) == (True, None)


@pytest.mark.django_db(transaction=True)
def test_a_tampered_format_1_chain_stops_the_conversion(alice, two_memories):
    events = list(AuditEvent.objects.filter(account=alice.account).order_by("seq"))
    _rewrite_as_format_1(alice.account.pk, events)
    _tamper("UPDATE memories_auditevent SET after = '{\"fact\": \"invented\"}' WHERE id = %s",
            [events[1].pk])
    with pytest.raises(convert.BrokenChain, match="does not verify at seq 2"):
        convert.convert_chains(AuditEvent, AuditChainHead)
    assert set(AuditEvent.objects.values_list("format", flat=True)) == {1}


def _rewrite_as_format_1(account_id: int, events: list[AuditEvent]) -> None:
    """What a box wrote before migration 0008."""
    from audit.chain import GENESIS, digest_v1

    prev = GENESIS
    for event in events:
        event.format, event.salt, event.payload_digest, event.prev_hash = 1, None, "", prev
        event.hash = prev = digest_v1(prev, event)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER USER")
        try:
            AuditEvent.objects.bulk_update(events, ["format", "salt", "payload_digest",
                                                    "prev_hash", "hash"])
        finally:
            cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER USER")
    AuditChainHead.objects.filter(account_id=account_id).update(hash=prev)



def _waiting_to_hold_the_memory() -> bool:
    with connection.cursor() as cursor:
        # Inside a transaction the activity view is a snapshot taken once; take a new one.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND query LIKE %s", ["%FROM memories_memory WHERE id = % FOR KEY SHARE"])
        return cursor.fetchone()[0] > 0


@pytest.mark.parametrize("call", ["write", "save"])
@pytest.mark.django_db(transaction=True)
def test_a_write_racing_the_memorys_deletion_waits_then_is_refused_cleanly(alice, call):
    """The deletion holds the memory's row while it erases; a write or recall save arriving
    meanwhile waits, then gets a clear NotFound (not a foreign-key fault), and nothing of it
    is kept."""
    import threading
    import time

    from django.db import transaction

    from tools.calling import run_validated
    from tools.registry import TOOLS

    principal = alice.principal
    memory_create(account_id=alice.account.pk, name="doomed")
    written = _write(Engine(principal), "doomed", ("Ada", "Grace"), "Ada mentors Grace")
    fact_id = written["edges_created"][0]["fact_id"]
    outcome: dict[str, object] = {}

    def late_writer() -> None:
        try:
            if call == "write":
                _write(Engine(principal), "doomed", ("Quillfeather", "Oberwocky"),
                       "Quillfeather mentors Oberwocky")
            else:
                run_validated(principal, TOOLS["record_recall_save"], {
                    "memory": "doomed", "scope": "shared", "fact_id": fact_id,
                    "note": "saved a re-explanation"})
        except Exception as refused:  # the assertion below names it
            outcome["error"] = refused
        finally:
            connection.close()

    with transaction.atomic():
        Memory.objects.select_for_update().filter(name="doomed").exists()
        writer = threading.Thread(target=late_writer)
        writer.start()
        deadline = time.monotonic() + 30
        while not _waiting_to_hold_the_memory():
            assert writer.is_alive() and time.monotonic() < deadline, outcome
            time.sleep(0.02)
        memory_delete(principal, "doomed", confirm="doomed")
    writer.join(30)
    assert isinstance(outcome.get("error"), NotFound), outcome
    assert "was deleted" in outcome["error"].message
    assert not Entity.objects.filter(name__in=["Quillfeather", "Oberwocky"]).exists()
    assert not RecallSave.objects.exists()
    assert audit_verify(alice.account.pk) == (True, None)
