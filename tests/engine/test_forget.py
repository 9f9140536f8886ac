"""Forgetting facts, entities and episodes: gone from recall, traces, vectors, word statistics
and audit payloads, the erasure audited, the chain still verifying; nothing done on a bad id."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from audit.models import AuditEvent
from audit.verify import audit_verify
from echomem.errors import NotFound, ValidationFailed
from memories.erasure.services import memory_delete
from memories.graph.services import memory_create
from memories.models import (
    CorpusStat,
    Entity,
    Episode,
    Fact,
    RecallSave,
    TermStat,
)
from tests.engine.conftest import database_text, pg_dump
from tests.factories import Engine, fact, person
from tools.calling import run_validated
from tools.registry import TOOLS

# Words only the forgotten objects use, one per kind of text (names, fact sentences, a
# superseded version, a recall save's note); lowercased stems, as the word statistics and
# full-text vectors hold them, are prefixes of these.
FORGOTTEN = ("quibbleworth", "vorticelli", "zephyrquartz", "glimmerfrond", "snorkelwhist")


def forget_in(principal, **arguments: Any) -> dict[str, Any]:
    arguments.setdefault("scope", "shared")
    return run_validated(principal, TOOLS["forget"], arguments)


def left_over(text: str) -> list[str]:
    text = text.lower()
    return [word for word in FORGOTTEN if word[:8] in text]


def entity_id(written: dict, name: str) -> str:
    return next(e["id"] for e in written["entities"] if e["name"] == name)


@pytest.fixture
def smuggling(engine: Engine) -> dict[str, Any]:
    """Two people to forget, with a causal fact, its later version and a recall save, beside
    facts that stay."""
    first = engine.write(assume_new=True, session_id="s1", entities=[
        person("Quibbleworth"), person("Vorticelli"), person("Maplethorpe"),
        person("Dunraven")], facts=[
        fact("Quibbleworth", "Vorticelli", "supplied", "Quibbleworth smuggled zephyrquartz "
             "to Vorticelli", causal_hint="led_to"),
        fact("Maplethorpe", "Dunraven", "coaches", "Maplethorpe coaches Dunraven at chess")])
    engine.save(fact_id=first["edges_created"][1]["fact_id"], note="the chess coach")
    second = engine.write(session_id="s2", entities=[
        person("Quibbleworth"), person("Vorticelli")], facts=[
        fact("Quibbleworth", "Vorticelli", "supplied", "Quibbleworth smuggled glimmerfrond "
             "to Vorticelli", causal_hint="led_to")])
    engine.save(fact_id=second["edges_created"][0]["fact_id"],
                note="snorkelwhist saved a re-explanation")
    Engine.index()
    return {"first": first, "second": second}


@pytest.mark.django_db(transaction=True)
def test_forgotten_entities_leave_no_text_in_a_dump_and_the_chain_verifies(alice, engine,
                                                                          smuggling):
    first = smuggling["first"]
    assert left_over(pg_dump()) == list(FORGOTTEN)
    events_before = AuditEvent.objects.filter(account=alice.account).count()

    done = forget_in(alice.principal, entities=[entity_id(first, "Quibbleworth"),
                                                entity_id(first, "Vorticelli")])

    assert (done["facts"], done["entities"], done["episodes"], done["notes"]) == (2, 2, 0, 0)
    assert done["recall_saves"] == 1 and done["units"] == 0
    # Two entity.created, two fact.created, one fact.superseded, one recall save.
    assert done["audit_events_erased"] == 6
    assert left_over(database_text()) == []
    with connection.cursor() as cursor:
        cursor.execute("VACUUM")
    dump = pg_dump()
    assert left_over(dump) == []
    assert "Maplethorpe coaches Dunraven at chess" in dump
    # The chess fact was written right after a forgotten one, so its vector was made with
    # that text as context and answered for it; embedded again without it, it no longer does.
    Engine.index()
    assert engine.query("who smuggled zephyrquartz or glimmerfrond to whom",
                        include_superseded=True)["facts"] == []
    recalled = engine.query("who coaches Dunraven at chess")["facts"]
    assert [f["fact"] for f in recalled] == ["Maplethorpe coaches Dunraven at chess"]
    assert engine.trace("Quibbleworth")["empty_reason"] == "no_anchor"
    assert left_over(str(engine.audit())) == []

    # The trail kept every event and gained one, which lists what it erased.
    events = list(AuditEvent.objects.filter(account=alice.account).order_by("seq"))
    assert [e.seq for e in events] == list(range(1, events_before + 2))
    last = events[-1]
    erased = [e.seq for e in events if e.erased_at is not None]
    assert last.action == "memory.forgotten" and last.after["erased_seqs"] == erased
    assert len(erased) == 6 and sorted(last.after["entities"]) == sorted(
        [entity_id(first, "Quibbleworth"), entity_id(first, "Vorticelli")])
    assert audit_verify(alice.account.pk) == (True, None)
    # The chess fact, its recall save and their events are untouched.
    assert RecallSave.objects.filter(note="the chess coach").exists()
    assert AuditEvent.objects.filter(action="fact.created", erased_at__isnull=True,
                                     after__fact__startswith="Maplethorpe").exists()


@pytest.mark.django_db(transaction=True)
def test_word_statistics_lose_the_forgotten_words_and_keep_shared_ones(alice, engine,
                                                                      smuggling):
    chess = TermStat.objects.get(term="chess").df
    documents = CorpusStat.objects.get().documents
    assert TermStat.objects.get(term="smuggl").df == 2

    forget_in(alice.principal, facts=[smuggling["second"]["edges_created"][0]["fact_id"]])

    assert TermStat.objects.get(term="smuggl").df == 1  # the earlier version still says it
    assert not TermStat.objects.filter(term__startswith="glimmerf").exists()
    assert TermStat.objects.get(term="chess").df == chess
    assert CorpusStat.objects.get().documents == documents - 1


def test_a_replaced_version_stays_history_and_a_forgotten_cause_is_not_traced(alice, engine,
                                                                             smuggling):
    older = smuggling["first"]["edges_created"][0]["fact_id"]
    newer = smuggling["second"]["edges_created"][0]["fact_id"]
    assert engine.trace("Quibbleworth", direction="downstream")["effects"]

    forget_in(alice.principal, facts=[newer])

    kept = Fact.objects.get(pk=older)
    assert kept.superseded_at is not None and kept.superseded_by_id is None
    def recalled(**extra):
        return [f["fact_id"] for f in engine.query("zephyrquartz smuggling", **extra)["facts"]]

    assert older not in recalled()  # not made live again
    assert recalled(include_superseded=True)[0] == older
    assert newer not in recalled(include_superseded=True)
    assert engine.trace("Quibbleworth")["empty_reason"] == "no_causal_links"
    # Its own events are erased; the older fact's supersession event keeps only an id.
    superseded = AuditEvent.objects.get(action="fact.superseded", object_id=older)
    assert superseded.salt is not None and superseded.after["superseded_by"] == newer
    assert not AuditEvent.objects.filter(object_id=newer, salt__isnull=False).exists()
    assert audit_verify(alice.account.pk) == (True, None)


def test_an_episode_goes_with_its_facts_and_the_entities_only_it_uses(alice, engine):
    first = engine.write(assume_new=True, entities=[
        person("Ada"), person("Grace"), person("Linus")], facts=[
        fact("Ada", "Grace", "mentors", "Ada mentors Grace"),
        fact("Linus", "Grace", "emails", "Linus emails Grace")])
    later = engine.write(entities=[person("Grace"), person("Ken")], assume_new=True,
                         facts=[fact("Ken", "Grace", "hires", "Ken hires Grace")])

    done = forget_in(alice.principal, episodes=[first["episode_id"]])

    assert (done["facts"], done["entities"], done["episodes"]) == (2, 2, 1)
    assert not Episode.objects.filter(pk=first["episode_id"]).exists()
    assert set(Entity.objects.values_list("name", flat=True)) == {"Grace", "Ken"}
    assert Entity.objects.get(name="Grace").episode_id is None  # its episode is gone
    assert list(Fact.objects.values_list("fact", flat=True)) == ["Ken hires Grace"]
    assert str(Fact.objects.get().episode_id) == later["episode_id"]
    assert audit_verify(alice.account.pk) == (True, None)


def test_other_accounts_and_other_scopes_ids_are_not_found_and_nothing_is_done(
        alice, bob, charlie, engine, smuggling):
    fact_id = smuggling["first"]["edges_created"][1]["fact_id"]
    events = AuditEvent.objects.count()
    with pytest.raises(NotFound) as outsider:
        forget_in(charlie.principal, facts=[fact_id])
    with pytest.raises(NotFound) as solo:
        forget_in(alice.principal, scope="solo", facts=[fact_id])
    assert outsider.value.field == solo.value.field == "facts"
    assert fact_id in outsider.value.message and fact_id in solo.value.message
    # One good id and one unknown: the whole call is refused, naming the unknown one.
    unknown = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(NotFound) as mixed:
        forget_in(alice.principal, facts=[fact_id],
                  entities=[unknown, entity_id(smuggling["first"], "Dunraven")])
    assert mixed.value.field == "entities" and unknown in mixed.value.message
    assert "nothing was forgotten" in mixed.value.message
    assert fact_id not in mixed.value.message
    assert Fact.objects.filter(pk=fact_id).exists() and AuditEvent.objects.count() == events
    # A member's key forgets in the shared scope, as it may write there.
    assert forget_in(bob.principal, facts=[fact_id])["facts"] == 1


@pytest.mark.parametrize(("arguments", "field"), [
    ({}, "facts"),
    ({"facts": ["not-a-uuid"]}, "facts[0]"),
    ({"notes": ["abc"]}, "notes[0]"),
    ({"facts": ["00000000-0000-4000-8000-000000000000"] * 501}, "facts"),
])
def test_bad_arguments_are_refused_naming_the_field(alice, arguments, field):
    with pytest.raises(ValidationFailed) as refused:
        forget_in(alice.principal, **arguments)
    assert refused.value.field == field


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("tampering", ["erased and not listed", "list extended"])
def test_an_erased_event_no_forget_event_lists_still_breaks_the_chain(alice, engine,
                                                                      smuggling, tampering):
    forget_in(alice.principal, facts=[smuggling["second"]["edges_created"][0]["fact_id"]])
    forgotten = AuditEvent.objects.get(action="memory.forgotten")
    chess = AuditEvent.objects.get(action="fact.created", after__fact__startswith="Maplethorpe")
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER USER")
        try:
            # Erased as the erasure path erases (a format-3 event's session id goes too).
            cursor.execute("UPDATE memories_auditevent SET before = NULL, after = NULL, "
                           "salt = NULL, erased_at = now(), session_id = CASE WHEN format >= 3 "
                           "THEN '' ELSE session_id END WHERE id = %s", [chess.pk])
            if tampering == "list extended":
                cursor.execute("UPDATE memories_auditevent SET after = jsonb_set(after, "
                               "'{erased_seqs}', (after -> 'erased_seqs') || %s::jsonb) "
                               "WHERE id = %s", [str(chess.seq), forgotten.pk])
        finally:
            cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER USER")
    broken = chess.seq if tampering == "erased and not listed" else forgotten.seq
    assert audit_verify(alice.account.pk) == (False, broken)


@pytest.mark.django_db(transaction=True)
def test_deleting_the_memory_after_a_forget_still_verifies(alice):
    engine = Engine(alice.principal)
    memory_create(account_id=alice.account.pk, name="doomed")
    written = engine.write(memory="doomed", assume_new=True,
                           entities=[person("Ada"), person("Grace")],
                           facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    forget_in(alice.principal, memory="doomed", facts=[written["edges_created"][0]["fact_id"]])
    assert audit_verify(alice.account.pk) == (True, None)
    memory_delete(alice.principal, "doomed", confirm="doomed")
    assert audit_verify(alice.account.pk) == (True, None)


def _waiting_for_the_memory() -> bool:
    with connection.cursor() as cursor:
        # Inside a transaction the activity view is a snapshot taken once; take a new one.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND query LIKE %s", ["%FROM memories_memory WHERE id = % FOR KEY SHARE"])
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_a_write_racing_a_forget_waits_then_lands_on_what_is_left(alice):
    """A fact written to an entity while it is being forgotten would point at a deleted row;
    the write waits for the forget instead, then makes the entity anew."""
    import threading
    import time

    from django.db import transaction

    engine = Engine(alice.principal)
    written = engine.write(assume_new=True, entities=[person("Ada"), person("Grace")],
                           facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    outcome: dict[str, Any] = {}

    def late_writer() -> None:
        try:
            outcome["reply"] = Engine(alice.principal).write(
                entities=[person("Ada"), person("Grace")],
                facts=[fact("Ada", "Grace", "thanks", "Ada thanks Grace")])
        except Exception as refused:  # the assertion below names it
            outcome["error"] = refused
        finally:
            connection.close()

    writer = threading.Thread(target=late_writer)
    with transaction.atomic():
        forget_in(alice.principal, entities=[entity_id(written, "Ada")])
        writer.start()
        deadline = time.monotonic() + 30
        while not _waiting_for_the_memory():
            assert writer.is_alive() and time.monotonic() < deadline, outcome
            time.sleep(0.02)
    writer.join(30)
    assert "error" not in outcome, outcome
    ada = next(e for e in outcome["reply"]["entities"] if e["name"] == "Ada")
    assert ada["created"] is True and ada["id"] != entity_id(written, "Ada")
    assert list(Fact.objects.values_list("fact", flat=True)) == ["Ada thanks Grace"]
    assert audit_verify(alice.account.pk) == (True, None)
