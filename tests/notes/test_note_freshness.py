"""A note saved on one call is searched with its vector on the next: memory_search embeds
its partition's newest waiting notes before it searches, whatever the indexer is doing."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from memories.models import Note
from memories.search import indexing
from tests import indexer_locks
from tests.factories import note

# Shares no word with the note of tests/notes/conftest.py (its words: switched, jwt, auth,
# replaced, session, cookies, stateless, mobile, api, sticky, endpoints, bearer, token...).
PARAPHRASE = "how do phones log in"


def search(agent, query: str = PARAPHRASE) -> dict:
    reply = agent.call("memory_search", {"query": query})["result"]
    assert reply["isError"] is False, reply
    return reply


def test_a_note_saved_on_the_last_call_is_found_by_meaning_on_this_one(agent):
    saved = agent.call("memory_save", note())["result"]
    assert Note.objects.get(pk=saved["id"]).embedding is None  # no indexer has run

    [hit] = search(agent)["results"]

    assert hit["id"] == saved["id"] and hit["matched"] == ["vector"]
    assert isinstance(hit["score"], float)
    stored = Note.objects.get(pk=saved["id"])
    # What the indexer would have stored, so it has nothing left to do: the vector and the
    # words near-word matching reads.
    assert stored.embedding is not None and "stateless" in stored.words
    assert indexing.index_pending() == 0


def test_a_search_embeds_only_its_own_partitions_newest_waiting_notes(agent, mcp_for,
                                                                      charlie):
    titles = [f"Decision number {i}" for i in range(django_settings.ECHO_MEMORY_SEARCH_EMBED_NOTES
                                                    + 2)]
    for title in titles:
        agent.call("memory_save", note(title=title))
    other = mcp_for(charlie).call("memory_save", note())["result"]

    search(agent)

    waiting = set(Note.objects.filter(embedding__isnull=True).values_list("title", flat=True))
    # The two oldest of this partition, and the other account's note, are the indexer's.
    assert waiting == {*titles[:2], "Switched to JWT auth"}
    assert Note.objects.get(pk=other["id"]).embedding is None
    assert Note.objects.filter(embedding__isnull=False).count() == len(titles) - 2
    assert indexing.index_pending() == 3


@pytest.fixture
def manual_indexing(settings):
    """Committed saves schedule no indexing, so only the code under test embeds a note."""
    settings.ECHO_MEMORY_INDEXING = "manual"
    return settings


def an_indexer_holding(note_id, *, seconds: float):
    """An indexer that has claimed the note's row (tests/indexer_locks.py)."""
    return indexer_locks.an_indexer_holding(
        f"SELECT {indexing.NOTE_COLUMNS} FROM memories_note WHERE id = %s FOR UPDATE",
        note_id, indexing._embed_and_store_notes, seconds=seconds)


@pytest.mark.django_db(transaction=True)
def test_a_search_waits_for_the_indexer_holding_the_note_within_its_budget(agent,
                                                                           manual_indexing):
    manual_indexing.ECHO_MEMORY_QUERY_EMBED_SECONDS = 10.0
    saved = agent.call("memory_save", note())["result"]

    with an_indexer_holding(saved["id"], seconds=0.2) as committed:
        [hit] = search(agent)["results"]
        assert committed.is_set()  # the search waited for the indexer to store it

    assert hit["id"] == saved["id"] and hit["matched"] == ["vector"]


@pytest.mark.django_db(transaction=True)
def test_a_search_gives_up_on_a_held_note_once_its_budget_is_spent(agent, manual_indexing):
    manual_indexing.ECHO_MEMORY_QUERY_EMBED_SECONDS = 0.2
    saved = agent.call("memory_save", note())["result"]

    with an_indexer_holding(saved["id"], seconds=60) as committed:
        reply = search(agent, "stateless JWT auth for the mobile API")
        assert not committed.is_set()  # answered while the row was still held

    # Found by its words, without a vector yet; the indexer still stored it afterwards.
    [hit] = reply["results"]
    assert hit["id"] == saved["id"] and hit["matched"] == ["text"] and hit["score"] is None
    assert committed.is_set() and Note.objects.get(pk=saved["id"]).embedding is not None
