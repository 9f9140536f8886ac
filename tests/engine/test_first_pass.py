"""First-pass vectors (memories/search/first_pass.py) on the real model's distilled table."""

from __future__ import annotations

import numpy as np

from memories.search import first_pass
from memories.search.embeddings import get_embedder

HIKE = "Alice spent her spring holiday hiking near Kyoto"
PARAPHRASE = "Who went trekking in the mountains during a vacation?"
UNRELATED = "Carol paid invoice number 42 on Tuesday"


def test_a_paraphrase_is_nearer_its_fact_than_an_unrelated_one_across_both_kinds():
    # The question is embedded by the model, the facts by first pass: the mix a search makes.
    question = get_embedder().embed([PARAPHRASE])[0]
    hike, unrelated = first_pass.vectors([HIKE, UNRELATED])
    assert abs(np.linalg.norm(hike) - 1) < 1e-5
    assert question @ hike > question @ unrelated + 0.1


def test_a_text_with_no_word_gets_no_vector(settings):
    settings.ECHO_MEMORY_FIRST_PASS = True
    vector, none = first_pass.halfvecs([HIKE, "-- !! ??"], [0, 1])
    assert vector.dimensions() == 384 and none is None


def test_turned_off_nothing_is_computed(settings):
    settings.ECHO_MEMORY_FIRST_PASS = False
    assert first_pass.halfvecs([HIKE, UNRELATED], [0, 1]) == [None, None]


QUESTION_TURN = "Melanie asked Caroline whether the adoption agency had approved her application"
REPLY = "Caroline: Yes, they said so last week!"


def test_a_reply_carries_the_turn_it_answers_but_its_own_words_weigh_most():
    question = get_embedder().embed(["When was Caroline's adoption application approved?"])[0]
    asked, reply_alone = first_pass.vectors([QUESTION_TURN, REPLY])
    _, reply = first_pass.in_episode([QUESTION_TURN, REPLY], [0, 1])
    assert abs(np.linalg.norm(reply) - 1) < 1e-5
    assert question @ reply > question @ reply_alone + 0.05
    assert reply @ reply_alone > reply @ asked


def test_context_is_the_two_positions_before_not_the_list_order():
    # A fact between them was not stored (a duplicate), so position 7 has only 5 before it.
    vectors = first_pass.in_episode([UNRELATED, QUESTION_TURN, REPLY], [2, 5, 7])
    alone = first_pass.vectors([UNRELATED, QUESTION_TURN, REPLY])
    assert np.allclose(vectors[0], alone[0]) and np.allclose(vectors[1], alone[1])
    weight = first_pass.CONTEXT_WEIGHTS[1]
    mixed = alone[2] + weight * alone[1]
    assert np.allclose(vectors[2], mixed / np.linalg.norm(mixed), atol=1e-6)


def test_a_text_with_no_word_takes_no_vector_from_its_context():
    vectors = first_pass.in_episode([HIKE, "-- !! ??"], [0, 1])
    assert vectors[0].any() and not vectors[1].any()


def test_a_deployment_that_embeds_without_context_writes_first_pass_vectors_without_it(
        settings):
    settings.ECHO_MEMORY_FIRST_PASS = True
    settings.ECHO_MEMORY_EMBED_CONTEXT = 0
    assert first_pass.halfvecs([QUESTION_TURN, REPLY], [0, 1])[1] == \
        first_pass.halfvecs([REPLY], [0])[0]
    settings.ECHO_MEMORY_EMBED_CONTEXT = 2
    assert first_pass.halfvecs([QUESTION_TURN, REPLY], [0, 1])[1] != \
        first_pass.halfvecs([REPLY], [0])[0]
