"""A fact's context words (the facts written just before it in its episode, as the indexer
embeds it with them) count in the word search at CONTEXT_WORD_WEIGHT for a fact its own
words found; they are stored with the fact, filled from the table for an import, and lose a
forgotten fact's words."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from django.db import connection

from memories.erasure.forget import forget
from memories.graph.selectors import memory_for
from memories.models import Fact
from memories.search import candidates, storing
from memories.search.embeddings import get_embedder
from memories.search.window import Window
from tests.factories import Engine, fact, person

TALK = [person("Mel"), person("Caro")]


def _context_words(fact_id) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(tsvector_to_array(context_vector), '{}') "
                       "FROM memories_fact WHERE id = %s", [fact_id])
        return set(cursor.fetchone()[0])


def _text(engine: Engine, query: str) -> dict[str, candidates.Candidate]:
    memory = memory_for(engine.principal)
    found = candidates.text_candidates(memory.pk, "shared", query, 20, Window())
    texts = dict(Fact.objects.filter(pk__in=[c.fact_id for c in found]).values_list("pk", "fact"))
    return {texts[c.fact_id]: c for c in found}


def test_a_reply_is_weighed_by_the_words_of_the_turn_it_answers(engine):
    engine.write(session_id="s1", entities=TALK, assume_new=True, facts=[
        fact("Mel", "Caro", "said 1", "Mel: did you finish that evening pottery course?"),
        fact("Caro", "Mel", "said 2", "Caro: Yes, I finished it last week.")])
    engine.write(session_id="s2", entities=TALK, facts=[
        fact("Mel", "Caro", "said 3", "Mel: how was the marathon?"),
        fact("Caro", "Mel", "said 4", "Caro: Great, I finished it last week.")])
    Engine.index()

    found = _text(engine, "when was the pottery course finished")

    answer, other = (found["Caro: Yes, I finished it last week."],
                     found["Caro: Great, I finished it last week."])
    # The same words of its own, plus "pottery" and "course" from the question before it.
    assert answer.score > other.score
    assert answer.coverage > other.coverage
    # Found by its own words only: a turn whose context alone holds the words is not.
    assert set(_text(engine, "pottery course")) == {
        "Mel: did you finish that evening pottery course?"}


def test_a_write_stores_the_context_the_indexer_embeds_with(engine):
    engine.write(session_id="s1", entities=TALK, assume_new=True, facts=[
        fact("Mel", "Caro", "said 2", "Mel: the kiln broke again")])
    # The repeated fact is unchanged, so not stored: the next one's context skips it, as
    # the indexer's does.
    engine.write(session_id="s2", entities=TALK, facts=[
        fact("Mel", "Caro", "said 1", "Mel: glazing takes patience"),
        fact("Mel", "Caro", "said 2", "Mel: the kiln broke again"),
        fact("Caro", "Mel", "said 3", "Caro: then we fire the vases on Sunday"),
        fact("Caro", "Mel", "said 4", "Caro: and paint them in June")])
    rows = list(Fact.objects.filter(session_id="s2").order_by("position")
                .values_list("id", "search_text", "episode_id", "position"))
    assert [row[3] for row in rows] == [0, 2, 3]
    with connection.cursor() as cursor:
        embedded = storing._texts_with_context(cursor, rows)
        for (fact_id, text, _, _), with_context in zip(rows, embedded, strict=True):
            context = with_context.removeprefix(text).strip() or None
            cursor.execute("SELECT coalesce(tsvector_to_array("
                           f"{storing.CONTEXT_VECTOR.format('%s::text')}), '{{}}')", [context])
            assert _context_words(fact_id) == set(cursor.fetchone()[0])
        # Filling from the table, as an import does, changes nothing.
        storing.fill_context_vectors(cursor, [rows[0][2]])
        assert cursor.rowcount == 0
    # Search texts name the endpoint a sentence leaves out: "Mel: glazing ... (Caro)".
    assert _context_words(rows[0][0]) == set()
    assert _context_words(rows[1][0]) == {"mel", "glaze", "take", "patienc", "caro"}
    assert _context_words(rows[2][0]) == {"caro", "fire", "vase", "sunday", "mel"}


def test_forgetting_a_fact_takes_its_words_out_of_the_next_facts_context(engine):
    written = engine.write(session_id="s1", entities=TALK, assume_new=True, facts=[
        fact("Mel", "Caro", "said 1", "Mel: the locker code is zanzibar"),
        fact("Caro", "Mel", "said 2", "Caro: noted, I keep the spare key"),
        fact("Mel", "Caro", "said 3", "Mel: thanks")])
    ids = [uuid.UUID(edge["fact_id"]) for edge in written["edges_created"]]
    assert "zanzibar" in _context_words(ids[1]) and "zanzibar" in _context_words(ids[2])

    forget(engine.principal, scope="shared", facts=[ids[0]])

    assert "zanzibar" not in _context_words(ids[1]) | _context_words(ids[2])
    assert _context_words(ids[1]) == set()
    assert _context_words(ids[2]) == {"caro", "note", "keep", "spare", "key", "mel"}


@pytest.mark.parametrize("context", [0, 2])
def test_the_context_follows_the_setting_the_vectors_use(engine, settings, context):
    settings.ECHO_MEMORY_EMBED_CONTEXT = context
    written = engine.write(session_id="s1", entities=TALK, assume_new=True, facts=[
        fact("Mel", "Caro", "said 1", "Mel: first"), fact("Caro", "Mel", "said 2", "Caro: second"),
        fact("Mel", "Caro", "said 3", "Mel: third"), fact("Caro", "Mel", "said 4", "Caro: fourth")])
    last = written["edges_created"][-1]["fact_id"]
    assert _context_words(last) == ({"caro", "mel", "second", "third"} if context else set())


def test_forgetting_a_fact_embeds_the_facts_after_it_again_without_it(engine):
    written = engine.write(session_id="s1", entities=TALK, assume_new=True, facts=[
        fact("Mel", "Caro", "said 1", "Mel: the locker code is zanzibar"),
        fact("Caro", "Mel", "said 2", "Caro: noted, I keep the spare key"),
        fact("Mel", "Caro", "said 3", "Mel: thanks"),
        fact("Caro", "Mel", "said 4", "Caro: see you at the pool"),
        fact("Mel", "Caro", "said 5", "Mel: bring the towels")])
    engine.index()
    ids = [uuid.UUID(edge["fact_id"]) for edge in written["edges_created"]]
    settled = {row.pk: row for row in Fact.objects.filter(pk__in=ids)}
    counted = _statistics()
    words = [_words(i) for i in ids[:3]]

    forget(engine.principal, scope="shared", facts=[ids[0]])

    waiting = {row.pk: row for row in Fact.objects.filter(pk__in=ids[1:])}
    # The two facts embedded with the forgotten one wait for the indexer again, found
    # meanwhile by a first-pass vector of what is left; the others keep their vectors.
    assert [waiting[i].embedding is None for i in ids[1:]] == [True, True, False, False]
    assert all(waiting[i].first_pass_embedding is not None for i in ids[1:3])
    # Out of the word statistics until the indexer counts them again.
    assert _statistics() == (counted[0] - 3, counted[1] - sum(words))
    engine.index()

    after = {row.pk: row for row in Fact.objects.filter(pk__in=ids[1:])}
    texts = [settled[i].search_text for i in ids]
    expected = get_embedder().embed([storing.with_context(texts[1], None),
                                     storing.with_context(texts[2], texts[1])])
    for fact_id, vector in zip(ids[1:3], expected, strict=True):
        assert _cosine(after[fact_id].embedding, vector) > 0.999
        assert _cosine(after[fact_id].embedding, settled[fact_id].embedding) < 0.99
        assert after[fact_id].first_pass_embedding is None
    for fact_id in ids[3:]:
        assert _cosine(after[fact_id].embedding, settled[fact_id].embedding) > 0.9999
    # Counted once again, not twice.
    assert _statistics() == (counted[0] - 1, counted[1] - words[0])


def _statistics() -> tuple[int, int]:
    """The word statistics' documents and the sum of every word's document count."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT sum(documents) FROM memories_corpusstat), "
                       "(SELECT sum(df) FROM memories_termstat)")
        documents, words = cursor.fetchone()
    return int(documents or 0), int(words or 0)


def _words(fact_id) -> int:
    """How many distinct words of this fact the word statistics count."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT length(search_vector) FROM memories_fact WHERE id = %s", [fact_id])
        return cursor.fetchone()[0]


def _cosine(a, b) -> float:
    a, b = np.asarray(a.to_list() if hasattr(a, "to_list") else a, dtype=float), \
        np.asarray(b.to_list() if hasattr(b, "to_list") else b, dtype=float)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
