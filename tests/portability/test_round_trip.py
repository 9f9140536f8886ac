"""Export, then import into another account: the same facts, history, notes, provenance."""

from __future__ import annotations

from memories.models import Fact, Note, NoteVersion, RecallSave
from tests.portability.conftest import exported, imported, records


def _facts(account) -> set[tuple]:
    return {(f.source.name, f.target.name, f.relation_type, f.fact, f.causal_hint,
             f.valid_at, f.invalid_at, f.superseded_at is None, f.partition.split(":")[0],
             f.created_at)
            for f in Fact.objects.filter(memory__account=account).select_related(
                "source", "target")}


def test_round_trip_into_another_account_keeps_facts_history_notes(alice, charlie, filled):
    lines = exported(alice.principal)
    kinds = [record["kind"] for record in records(lines)]
    assert kinds[0] == "header" and kinds[-1] == "trailer"

    report = imported(charlie.principal, lines)

    assert report.counts["fact"].created == 4
    assert _facts(charlie.account) == _facts(alice.account)
    replaced = Fact.objects.get(memory__account=charlie.account, fact="Alice works at Acme")
    assert replaced.superseded_by.fact == "Alice left Acme for good"
    assert set(Fact.objects.filter(memory__account=charlie.account).values_list(
        "episode__session_id", flat=True)) == {""}
    mine = Note.objects.get(memory__account=charlie.account)
    assert (mine.what, mine.version) == ("Moved to JWT, rotated daily", 2)
    assert NoteVersion.objects.get(note=mine).what.startswith("Replaced session cookies")
    assert RecallSave.objects.filter(memory__account=charlie.account).count() == 1


def test_second_import_changes_nothing(alice, charlie, filled):
    lines = exported(alice.principal)
    imported(charlie.principal, lines)
    before = _facts(charlie.account)

    again = imported(charlie.principal, lines)

    assert not again.changed
    assert again.counts["fact"].already_present == 4
    assert _facts(charlie.account) == before


def test_a_later_export_brings_the_sources_new_version_of_an_edge(alice, charlie, filled):
    imported(charlie.principal, exported(alice.principal))
    filled.write(entities=[{"name": "Alice", "type": "person"},
                           {"name": "Acme", "type": "company"}],
                 facts=[{"source": "Alice", "target": "Acme", "relation_type": "works_at",
                         "fact": "Alice returned to Acme", "confidence": "extracted"}])

    later = imported(charlie.principal, exported(alice.principal))

    assert later.counts["fact"].created == 1 and later.counts["fact"].already_present == 4
    assert _facts(charlie.account) == _facts(alice.account)
    left = Fact.objects.get(memory__account=charlie.account, fact="Alice left Acme for good")
    assert left.superseded_by.fact == "Alice returned to Acme"
    assert not imported(charlie.principal, exported(alice.principal)).changed


def test_imported_facts_keep_the_context_words_of_their_episode(alice, charlie, filled):
    from django.db import connection

    def context_words(account) -> set[tuple]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT f.fact, f.context_vector::text FROM memories_fact f "
                           "JOIN memories_memory m ON m.id = f.memory_id WHERE m.account_id = %s",
                           [account.pk])
            return set(cursor.fetchall())

    imported(charlie.principal, exported(alice.principal))

    assert context_words(charlie.account) == context_words(alice.account)
    assert any(words for _, words in context_words(charlie.account))
