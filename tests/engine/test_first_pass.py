"""First-pass vectors (memories/first_pass.py) on the real model's distilled table."""

from __future__ import annotations

import numpy as np

from memories import first_pass
from memories.embeddings import get_embedder

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
    literal, none = first_pass.literals([HIKE, "-- !! ??"])
    assert literal.startswith("[") and none is None


def test_turned_off_nothing_is_computed(settings):
    settings.ECHO_MEMORY_FIRST_PASS = False
    assert first_pass.literals([HIKE, UNRELATED]) == [None, None]
