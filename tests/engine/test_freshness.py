"""Freshness: a fact is found by meaning on the very next call, whatever else is waiting.

The indexer runs `manual` here, so nothing embeds a fact unless the code under test does.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from django.db import connection

from memories.graph.selectors import question_vector
from memories.models import Fact
from memories.search import candidates, freshness, indexing
from memories.search.embeddings import get_embedder
from memories.search.window import Window
from tests import indexer_locks
from tests.factories import Engine, fact, person

HIKE = fact("Alice", "Kyoto", "travelled_to", "Alice spent her spring holiday hiking near Kyoto")
# Shares no word with HIKE (nor with its endpoints' names): only the vector can find it.
PARAPHRASE = "Who went trekking in the mountains during a vacation?"
TRIP = [person("Alice"), {"name": "Kyoto", "type": "city"}]


@pytest.fixture(autouse=True)
def manual_indexing(settings):
    settings.ECHO_MEMORY_INDEXING = "manual"
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 64
    settings.ECHO_MEMORY_QUERY_EMBED_SECONDS = 5.0


def bulk(engine: Engine, episodes: int, per_episode: int) -> None:
    """Self-contained facts about made-up services, written as an import would."""
    for episode in range(episodes):
        engine.write(session_id=f"import-{episode}", assume_new=True,
                     entities=[{"name": "ledger", "type": "service"},
                               {"name": "warehouse", "type": "service"}],
                     facts=[fact("ledger", "warehouse", f"sync_{episode}_{i}",
                                 f"Ledger batch {episode}-{i} copies invoices into the warehouse")
                            for i in range(per_episode)])


def vector_of(fact_id, column: str = "embedding") -> np.ndarray:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column}::vector::text FROM memories_fact WHERE id = %s",
                       [fact_id])
        return np.array([float(x) for x in cursor.fetchone()[0].strip("[]").split(",")])


def cosine(a, b) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def embedded_by_queries(principal) -> set[str]:
    """Facts a query has embedded with the model while they wait (first_pass_from_model)."""
    return {str(pk) for pk in Fact.objects.filter(
        memory__account_id=principal.account_id, embedding__isnull=True,
        first_pass_from_model=True).values_list("pk", flat=True)}


def test_the_next_call_finds_a_just_written_fact_by_meaning(engine, charlie):
    # Context facts first, so the fact is embedded with context as the indexer would.
    written = engine.write(session_id="trip", entities=TRIP, assume_new=True, facts=[
        fact("Alice", "Kyoto", "planned", "Alice booked a flight to Japan in March"), HIKE])
    fact_id = written["edges_created"][1]["fact_id"]
    assert Fact.objects.get(pk=fact_id).embedding is None

    reply = engine.query(PARAPHRASE)

    hit = next(f for f in reply["facts"] if f["fact_id"] == fact_id)
    assert hit["rank"] == 1 and hit["matched"] == ["vector"], reply["facts"]
    # The query embedded it with the model (int8) to rank it, and kept that vector in place
    # of the first-pass one; the settled vector is still the indexer's to store.
    assert reply["facts_pending_vector"] == 2
    assert fact_id in embedded_by_queries(engine.principal)
    provisional = vector_of(fact_id, "first_pass_embedding")
    asked = question_vector(PARAPHRASE)  # as query_memory embeds it
    # At least that vector's cosine (it may keep its first-pass score less the margin).
    assert hit["score"] >= cosine(asked, provisional) - 2e-3

    # What the indexer stores is the settled vector: the same as for the same episode in
    # another account, which no query touched; the query's own was close to it.
    other = Engine(charlie.principal).write(
        session_id="trip", entities=TRIP, assume_new=True, facts=[
            fact("Alice", "Kyoto", "planned", "Alice booked a flight to Japan in March"), HIKE])
    assert indexing.index_pending() == 4
    settled = vector_of(other["edges_created"][1]["fact_id"])
    assert cosine(vector_of(fact_id), settled) >= 0.999
    assert cosine(provisional, settled) >= 0.98
    stored = Fact.objects.get(pk=fact_id)
    assert stored.first_pass_embedding is None and not stored.first_pass_from_model
    assert engine.query(PARAPHRASE)["facts_pending_vector"] == 0


def test_one_accounts_bulk_import_does_not_delay_anothers_fact(engine, charlie, settings):
    # Only the indexer embeds here: this is about its turns, not the query's help.
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    importer = Engine(charlie.principal)
    bulk(importer, episodes=3, per_episode=500)
    written = engine.write(session_id="trip", entities=TRIP, assume_new=True, facts=[HIKE])

    assert indexing.index_pending(limit=indexing.BATCH_SIZE) > 0  # one batch

    assert Fact.objects.get(pk=written["edges_created"][0]["fact_id"]).embedding is not None
    reply = engine.query(PARAPHRASE)
    assert reply["facts"][0]["fact"] == HIKE["fact"] and "vector" in reply["facts"][0]["matched"]
    assert reply["facts_pending_vector"] == 0
    # The import waits its turn instead: most of it is still queued.
    waiting = importer.query("ledger invoices")["facts_pending_vector"]
    assert 1500 - indexing.BATCH_SIZE <= waiting < 1500


def test_two_memories_of_one_account_take_turns_too(engine, alice, settings):
    from memories.graph.services import memory_create

    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    memory_create(account_id=alice.account.pk, name="imports")
    for episode in range(2):
        engine.write(memory="imports", session_id=f"import-{episode}", assume_new=True,
                     entities=[{"name": "ledger", "type": "service"}],
                     facts=[fact("ledger", "ledger", f"row_{episode}_{i}", f"Ledger row {i}")
                            for i in range(100)])
    written = engine.write(session_id="trip", entities=TRIP, assume_new=True, facts=[HIKE])

    indexing.index_pending(limit=indexing.BATCH_SIZE)

    assert Fact.objects.get(pk=written["edges_created"][0]["fact_id"]).embedding is not None


def test_the_reply_counts_the_facts_still_waiting_for_their_vector(engine, charlie, settings):
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    bulk(engine, episodes=1, per_episode=5)
    bulk(Engine(charlie.principal), episodes=1, per_episode=7)  # another account's

    assert engine.query("ledger")["facts_pending_vector"] == 5
    assert engine.query(digest=True)["facts_pending_vector"] == 5
    # The solo partition has nothing waiting of its own.
    assert engine.query("ledger", scope="solo")["facts_pending_vector"] == 0

    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 2
    reply = engine.query("ledger")
    # What a query embeds to rank by still waits for its settled vector.
    assert reply["facts_pending_vector"] == 5
    # The two it embedded are among the query's own candidates (which two is the next test's
    # concern), not whichever facts were written last.
    embedded = embedded_by_queries(engine.principal)
    assert len(embedded) == 2 and embedded <= {f["fact_id"] for f in reply["facts"]}

    indexing.index_pending()
    assert engine.query("ledger")["facts_pending_vector"] == 0


def test_the_query_spends_no_more_than_its_fact_budget(engine, settings):
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 40
    # The fact budget is under test, not the time one (a loaded box must not cut it short).
    settings.ECHO_MEMORY_QUERY_EMBED_SECONDS = 600.0
    bulk(engine, episodes=1, per_episode=100)

    assert engine.query("ledger invoices")["facts_pending_vector"] == 100
    assert len(embedded_by_queries(engine.principal)) == 40
    # The next query embeds the next 40 of its candidates, not the same ones again.
    engine.query("ledger invoices")
    assert len(embedded_by_queries(engine.principal)) == 80


def an_indexer_holding(fact_id, *, seconds: float):
    """An indexer that has claimed the fact's row (tests/indexer_locks.py)."""
    return indexer_locks.an_indexer_holding(
        "SELECT id, search_text, episode_id, position FROM memories_fact "
        "WHERE id = %s FOR UPDATE", fact_id, indexing._embed_and_store, seconds=seconds)


@pytest.mark.django_db(transaction=True)
def test_a_query_does_not_wait_for_an_indexer_that_holds_the_fact_it_needs(alice):
    engine = Engine(alice.principal)
    written = engine.write(session_id="trip", entities=TRIP, assume_new=True, facts=[HIKE])
    fact_id = written["edges_created"][0]["fact_id"]

    with an_indexer_holding(fact_id, seconds=60) as committed:
        reply = engine.query(PARAPHRASE)
        # The reply came while the row was still held.
        assert not committed.is_set()

    # Found by meaning, ranked by the vector the query embedded; the indexer's row was left
    # alone (the query kept nothing of its own there) and now has its settled vector.
    assert reply["facts"][0]["fact_id"] == fact_id
    assert reply["facts"][0]["matched"] == ["vector"]
    assert reply["facts_pending_vector"] == 1
    assert committed.is_set()
    stored = Fact.objects.get(pk=fact_id)
    assert stored.embedding is not None and not stored.first_pass_from_model
    asked = question_vector(PARAPHRASE)  # as query_memory embeds it
    assert reply["facts"][0]["score"] >= cosine(asked, vector_of(fact_id)) - 0.02


@pytest.mark.django_db(transaction=True)
def test_rescoring_reads_the_settled_cosine_of_a_fact_stored_since_the_first_search(alice):
    engine = Engine(alice.principal)
    written = engine.write(session_id="trip", entities=TRIP, assume_new=True, facts=[
        HIKE, fact("Alice", "Kyoto", "climbed_near", "Alice climbed a mountain near Kyoto")])
    held, stored = (uuid.UUID(edge["fact_id"]) for edge in written["edges_created"])
    indexing.index_fact_ids([stored])  # settled before the query, not in its first search
    query_vector = get_embedder().embed([PARAPHRASE])[0]

    with an_indexer_holding(held, seconds=60) as committed:
        rescored = freshness.rescore_waiting([held, stored], query_vector, facts=4, seconds=5)
        assert not committed.is_set()

    assert rescored.embedded == [held]
    assert set(rescored.cosines) == {held, stored}
    settled = np.asarray(Fact.objects.get(pk=stored).embedding, dtype=np.float32)
    assert rescored.cosines[stored] == pytest.approx(float(query_vector @ settled), abs=2e-3)
    # The held fact's cosine is the int8 model's, close to the one its settled vector gives
    # (on 300 LoCoMo turns the two vectors' cosine is 0.993 on average, 0.973 at worst).
    assert rescored.cosines[held] == pytest.approx(cosine(query_vector, vector_of(held)),
                                                   abs=0.04)


# A 500-fact episode of everyday records, a few of them about other trips, so that the
# paraphrase has near misses to beat.
FILLER_TEMPLATES = [
    ("Bob", "Paris", "flew_to", "Bob flew to Paris for a conference on databases {i}"),
    ("Carol", "invoice", "paid", "Carol paid invoice number {i} on Tuesday"),
    ("Dan", "garden", "planted", "Dan planted tomato row {i} in the garden"),
    ("Eve", "book", "read", "Eve read chapter {i} of the history book"),
    ("Frank", "car", "serviced", "Frank had the car serviced after {i} miles"),
]


def five_hundred_facts_with(target: dict, at: int) -> dict:
    facts = [fact(*template[:3], template[3].format(i=i)) | {"relation_type": f"{template[2]}_{i}"}
             for i in range(499) for template in [FILLER_TEMPLATES[i % len(FILLER_TEMPLATES)]]]
    facts.insert(at, target)
    names = {name for f in facts for name in (f["source"], f["target"])}
    return {"session_id": "day", "assume_new": True, "facts": facts,
            "entities": [{"name": name, "type": "thing"} for name in sorted(names)]}


@pytest.mark.parametrize("importing", [False, True], ids=["alone", "while-another-imports"])
def test_a_500_fact_episode_is_found_by_meaning_on_the_next_call(engine, charlie, settings,
                                                                 importing):
    # Nothing embeds: neither an indexer nor the query's own budget. The first-pass vector
    # written with the fact is what finds it.
    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    if importing:
        bulk(Engine(charlie.principal), episodes=3, per_episode=500)
    # In the middle: the indexer would embed it with two unrelated facts of context.
    written = engine.write(**five_hundred_facts_with(HIKE, at=250))
    assert written["stored"] and len(written["edges_created"]) == 500
    fact_id = written["edges_created"][250]["fact_id"]  # in position order
    assert Fact.objects.get(pk=fact_id).embedding is None

    reply = engine.query(PARAPHRASE)

    hit = next(f for f in reply["facts"] if f["fact_id"] == fact_id)
    assert hit["rank"] <= 3 and "vector" in hit["matched"], reply["facts"]
    assert reply["facts_pending_vector"] == 500


def test_the_next_call_embeds_its_best_candidates_of_a_500_fact_episode(engine, settings):
    """The query embeds its own best waiting candidates (not the episode's newest facts) and
    ranks them with those vectors: the paraphrased fact in the middle of the episode is
    scored no lower than the cosine of the vector the query kept for it."""

    settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 8
    episode = five_hundred_facts_with(HIKE, at=250)
    # The turn before it is about the same trip, so its vector (read with that
    # context, as the indexer reads it) is about the trip too. Between two unrelated facts
    # the settled vector of so short a fact is mostly its neighbours' (docs/engine.md).
    episode["facts"][249] = fact("Alice", "Kyoto", "planned",
                                 "Alice booked a flight to Japan in March")
    written = engine.write(**episode)
    fact_id = written["edges_created"][250]["fact_id"]

    reply = engine.query(PARAPHRASE)

    assert reply["facts_pending_vector"] == 500
    embedded = embedded_by_queries(engine.principal)
    assert len(embedded) == 8 and fact_id in embedded
    hit = next(f for f in reply["facts"] if f["fact_id"] == fact_id)
    # First or second: the flight to Japan before it is about the same trip.
    assert hit["rank"] <= 2 and "vector" in hit["matched"], reply["facts"]
    kept = vector_of(fact_id, "first_pass_embedding")
    asked = question_vector(PARAPHRASE)  # as query_memory embeds it
    # At least that cosine: a fact embedded in this call may keep its first-pass score less
    # the margin where that is higher (search.with_settled).
    assert hit["score"] >= cosine(asked, kept) - 1e-3
    # None of the episode's last facts was embedded on the way (nor would any of them
    # have been a candidate: they are about Frank's car and Eve's book).
    assert not embedded & {e["fact_id"] for e in written["edges_created"][-8:]}
    # The next query ranks it by that vector as it is, without embedding it again (without
    # the first-pass score this call could keep, so it may fall a place).
    again = next(f for f in engine.query(PARAPHRASE)["facts"] if f["fact_id"] == fact_id)
    assert again["rank"] <= 3 and again["score"] == pytest.approx(cosine(asked, kept),
                                                                  abs=2e-3)


def test_words_weigh_a_just_written_fact_as_they_will_once_it_is_indexed(engine):
    """Word statistics come from the indexer; until it runs, the waiting facts are counted
    when searched, so the word ranking right after a write is the settled one."""
    from memories.models import Fact

    engine.write(entities=[person("Ann"), person("Ben"), person("Cy"), person("Dee")],
                 assume_new=True, facts=[
        fact("Ann", "Ben", "knows", "Ann knows Ben from the climbing gym"),
        fact("Ann", "Cy", "hikes_with", "Ann hikes with Cy every Sunday"),
        fact("Ben", "Dee", "climbs_with", "Ben climbs with Dee at the gym on Sundays"),
        fact("Cy", "Dee", "works_with", "Cy works with Dee at the observatory"),
    ])
    memory_id, partition = Fact.objects.values_list("memory_id", "partition").first()

    def scores() -> dict[object, float]:
        # By fact: two facts of one episode that score alike may come back in either order.
        found = candidates.text_candidates(memory_id, partition,
                                           "who goes to the climbing gym", 10, Window())
        return {c.fact_id: round(c.score, 6) for c in found}

    waiting = scores()
    assert Engine.index() == 4
    assert waiting == scores() and len(waiting) == 2


def test_a_just_embedded_fact_keeps_its_first_pass_score_less_the_margin_where_higher():
    """Model cosines replace first-pass ones; only a fact embedded in this very call may
    keep its first-pass score less FIRST_PASS_MARGIN, and a word match with a vector now
    joins the vector list."""
    import uuid

    from memories.search.hybrid import FIRST_PASS_MARGIN, Candidate, with_settled

    def candidate(score, coverage=None):
        return Candidate(uuid.uuid4(), score, uuid.uuid4(), uuid.uuid4(), coverage)

    diluted, old, words_only, untouched = candidate(0.5), candidate(0.5), candidate(3.0, 0.8), \
        candidate(0.3)
    cosines = {diluted.fact_id: 0.2, old.fact_id: 0.2, words_only.fact_id: 0.25}

    ranked = with_settled([diluted, old, untouched], [words_only], cosines, 10,
                          just_embedded={diluted.fact_id})

    scores = {c.fact_id: c.score for c in ranked}
    assert scores[diluted.fact_id] == pytest.approx(0.5 - FIRST_PASS_MARGIN)
    assert scores[old.fact_id] == pytest.approx(0.2)
    assert scores[words_only.fact_id] == pytest.approx(0.25)
    assert scores[untouched.fact_id] == pytest.approx(0.3)
    assert [c.fact_id for c in ranked] == [diluted.fact_id, untouched.fact_id,
                                           words_only.fact_id, old.fact_id]
    assert all(c.coverage is None for c in ranked)
    assert len(with_settled([diluted, old, untouched], [words_only], cosines, 2)) == 2
