"""The words near-word matching reads follow the notes: listed at indexing, dropped with edits."""

from __future__ import annotations

from memories.models import Note, NoteWord
from memories.search import indexing
from tests.factories import note


def words() -> set[str]:
    return set(NoteWord.objects.values_list("word", flat=True))


def test_an_edit_replaces_the_notes_words_and_drops_those_no_note_holds(agent):
    first = agent.call("memory_save", note(title="Cache keys", what="Keys carry a zorblat suffix",
                                           why=None, impact=None, details=None,
                                           tags=[]))["result"]
    assert indexing.index_pending() == 1
    listed = Note.objects.get(pk=first["id"]).words
    assert {"cache", "keys", "carry", "zorblat", "suffix"} <= set(listed)
    assert listed == sorted(set(listed)) and "a" not in listed
    assert {"zorblat", "suffix", "keys"} <= words()

    agent.call("memory_save", note(title="Cache keys", what="Keys carry a quibbon prefix",
                                   why=None, impact=None, details=None, tags=[]))
    assert Note.objects.get(pk=first["id"]).words is None  # waiting for the indexer
    assert indexing.index_pending() == 1

    assert {"quibbon", "prefix", "keys"} <= words()
    assert not {"zorblat", "suffix"} & words()
