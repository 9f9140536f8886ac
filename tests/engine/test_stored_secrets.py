"""Migration 0018 erases the secrets a box stored before every tool's free text was
redacted, through the one erasure path, and every chain still verifies.

The rows are written the old way: through the services (which no longer redact: call_tool
does), with the chain then rewritten as format 2, what the previous release wrote.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from accounts.audit_chains import audit_verify_accounts
from accounts.models import Account
from audit.chain import GENESIS, SECRETS_ERASED, digest_v2, payload_digest
from audit.models import AuditChainHead, AuditEvent
from audit.verify import audit_verify
from memories.erasure.services import memory_delete
from memories.graph.services import memory_create
from memories.models import Episode, Fact, RecallSave
from tests.engine.conftest import database_text
from tests.factories import Engine, fact, person
from tests.notes.secret_corpus import MISSED, SECRETS, secret_of

BEFORE = ("memories", "0017_fact_first_pass_from_model")
ERASING = ("memories", "0018_erase_stored_secrets")
TOKEN = SECRETS[3]  # a GitHub token
JWT = MISSED[0]  # a bare JWT: the old rules missed it
SESSION = MISSED[-1]  # a URL password with an @
LEFT = "Maplethorpe coaches Dunraven"  # text with no secret, kept everywhere


def migrate(target: tuple[str, str]) -> None:
    MigrationExecutor(connection).migrate([target])


def _rewrite_as_format_2(account_id: int) -> None:
    """What the previous release wrote: session ids under the hash, not the digest."""
    events = list(AuditEvent.objects.filter(account_id=account_id).order_by("seq"))
    prev = GENESIS
    for event in events:
        event.format, event.prev_hash = 2, prev
        event.payload_digest = payload_digest(event.salt, event.before, event.after)
        event.hash = prev = digest_v2(prev, event)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER USER")
        try:
            AuditEvent.objects.bulk_update(events, ["format", "payload_digest", "prev_hash",
                                                    "hash"])
        finally:
            cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER USER")
    AuditChainHead.objects.filter(account_id=account_id).update(hash=prev)


# Columns of memories_fact that migrations after BEFORE add and today's write stores.
LATER_FACT_COLUMNS = {"context_vector": "tsvector"}  # 0022


@contextmanager
def _later_fact_columns():
    """The old box is written by today's write_episode: the columns it stores that the old
    schema lacks stand in while it writes, then go (the old box had none of them)."""
    with connection.cursor() as cursor:
        for column, kind in LATER_FACT_COLUMNS.items():
            cursor.execute(f"ALTER TABLE memories_fact ADD COLUMN {column} {kind}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for column in LATER_FACT_COLUMNS:
                cursor.execute(f"ALTER TABLE memories_fact DROP COLUMN {column}")


def _old_box(alice, charlie) -> dict:
    """Alice (redaction on) wrote secrets where nothing redacted them; a memory of hers
    with a secret session id was deleted since; charlie switched redaction off."""
    ada = Engine(alice.principal)
    memory_create(account_id=alice.account.pk, name="doomed")
    ada.write(memory="doomed", session_id=f"run {SESSION[1]}", assume_new=True,
              entities=[person("Quill"), person("Zan")], facts=[fact("Quill", "Zan", "knows",
                                                                     "Quill knows Zan")])
    written = ada.write(session_id=f"deploy {SESSION[1]}", project=f"ops {TOKEN[1]}",
                        assume_new=True, entities=[person("Vault"), person("Billing")],
                        facts=[fact("Vault", "Billing", "serves",
                                    f"Billing signs in with {JWT[1]}")])
    ada.write(session_id="clean-run", assume_new=True,
              entities=[person("Maplethorpe"), person("Dunraven")],
              facts=[fact("Maplethorpe", "Dunraven", "coaches", LEFT)])
    ada.save(fact_id=written["edges_created"][0]["fact_id"], note=f"saved {TOKEN[1]}",
             session_id=f"recall {TOKEN[1]}")
    Account.objects.filter(pk=charlie.account.pk).update(redact_secrets=False)
    Engine(charlie.principal).write(session_id=f"charlie {TOKEN[1]}", assume_new=True,
                                entities=[person("Bobby")], facts=[])
    return written


@pytest.mark.django_db(transaction=True)
def test_secrets_stored_the_old_way_are_erased_and_every_chain_still_verifies(alice, charlie):
    try:
        migrate(BEFORE)
        with _later_fact_columns():
            _old_box(alice, charlie)
        _rewrite_as_format_2(alice.account.pk)
        _rewrite_as_format_2(charlie.account.pk)
        memory_delete(alice.principal, "doomed", confirm="doomed")  # the old trigger's way
        assert [c.ok for c in audit_verify_accounts()] == [True, True]
        stored = database_text()
        assert all(secret_of(s) in stored for s in (TOKEN, JWT, SESSION))
        doomed_sessions = set(AuditEvent.objects.filter(
            account=alice.account, erased_at__isnull=False).values_list("session_id", flat=True))
        assert any(SESSION[1] in session for session in doomed_sessions)
        seqs_before = AuditEvent.objects.filter(account=alice.account).count()

        migrate(ERASING)

        # `echo-memory audit verify` runs this: every chain intact.
        assert [(c.account_id, c.ok) for c in audit_verify_accounts()] == [
            (alice.account.pk, True), (charlie.account.pk, True)]
        alices = AuditEvent.objects.filter(account=alice.account)
        text = "\n".join(str((e.session_id, e.before, e.after)) for e in alices)
        assert not any(secret_of(s) in text for s in (TOKEN, JWT, SESSION)), text
        for model, columns in ((RecallSave, ("note", "session_id")),
                               (Episode, ("session_id", "project")),
                               (Fact, ("session_id", "project", "fact"))):
            rows = str(list(model.objects.filter(memory__account=alice.account)
                            .values_list(*columns)))
            assert secret_of(TOKEN) not in rows and secret_of(SESSION) not in rows, rows
        assert RecallSave.objects.get().note == "saved [REDACTED:github-token]"
        # Nothing was removed: the same events, plus one secrets.erased per memory.
        erasures = alices.filter(action=SECRETS_ERASED)
        assert alices.count() == seqs_before + erasures.count() and erasures.count() >= 1
        listed = {seq for e in erasures for seq in e.after["erased_seqs"]}
        assert listed == set(alices.filter(erased_at__isnull=False).exclude(
            memory_name="doomed").values_list("seq", flat=True))
        assert alices.get(action="recall_save.recorded").salt is None
        # What held no secret keeps its text and its session id.
        kept = alices.get(action="fact.created", after__fact=LEFT)
        assert kept.salt is not None and kept.session_id == "clean-run"
        # Charlie switched redaction off: his text is his own.
        assert AuditEvent.objects.filter(account=charlie.account,
                                         session_id__contains=secret_of(TOKEN)).exists()
        # New writes go on the same chain; tampering with what remains is still caught.
        Engine(alice.principal).write(session_id="after", assume_new=True,
                                      entities=[person("Newcomer")], facts=[])
        assert audit_verify(alice.account.pk) == (True, None)
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER USER")
            cursor.execute("UPDATE memories_auditevent SET session_id = 'forged' WHERE id = %s",
                           [kept.pk])
            cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER USER")
        assert audit_verify(alice.account.pk) == (False, kept.seq)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_resealing_path_changes_nothing_but_the_chain_links(alice):
    Engine(alice.principal).write(session_id="s-1", assume_new=True,
                                  entities=[person("Ada")], facts=[])
    event = AuditEvent.objects.get(account=alice.account, session_id="s-1")
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_resealing', 'on', false)")
        try:
            for change in ("action = 'x'", "after = NULL", "session_id = ''",
                           "format = 2", "salt = NULL"):
                with pytest.raises(DatabaseError, match="append-only"):
                    cursor.execute(f"UPDATE memories_auditevent SET {change} WHERE id = %s",
                                   [event.pk])
            cursor.execute("UPDATE memories_auditevent SET hash = repeat('1', 64) "
                           "WHERE id = %s", [event.pk])
        finally:
            cursor.execute("SELECT set_config('echo_memory.audit_resealing', 'off', false)")
    assert audit_verify(alice.account.pk) == (False, event.seq)


@pytest.mark.django_db(transaction=True)
def test_erasing_a_format_3_event_blanks_its_session_id_and_the_chain_verifies(alice):
    engine = Engine(alice.principal)
    memory_create(account_id=alice.account.pk, name="doomed")
    engine.write(memory="doomed", session_id="private-run-label", assume_new=True,
                 entities=[person("Ada")], facts=[])
    memory_delete(alice.principal, "doomed", confirm="doomed")
    erased = AuditEvent.objects.get(account=alice.account, action="entity.created")
    assert (erased.format, erased.salt, erased.session_id) == (3, None, "")
    assert audit_verify(alice.account.pk) == (True, None)
