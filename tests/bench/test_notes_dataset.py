"""The note search-quality set is sound: the figures bench/notes_quality.py prints rest on it."""

from __future__ import annotations

import json

import pytest

from bench import notes_dataset
from bench.notes_dataset import content_words, load, paraphrase_share, problems


@pytest.fixture(scope="module")
def dataset():
    return load()


def test_the_set_has_no_problems(dataset):
    notes, questions = dataset
    assert problems(notes, questions) == []


def test_size_and_mix_match_issue_12(dataset):
    notes, questions = dataset
    by_project: dict[str, int] = {}
    for note in notes:
        by_project[note["project"]] = by_project.get(note["project"], 0) + 1
    main, *others = sorted(by_project.values(), reverse=True)
    assert main >= 60 and sum(others) >= 15
    assert len(questions) >= 60
    assert {n["category"] for n in notes} == notes_dataset.CATEGORIES
    assert sum(1 for q in questions if q["kind"] == "exact") >= 15


def test_at_least_half_the_questions_share_no_word_with_their_evidence(dataset):
    notes, questions = dataset
    assert paraphrase_share(notes, questions) >= 0.5


def test_note_fields_fit_memory_save(dataset):
    notes, _ = dataset
    allowed = {"id", "project", "category", "title", "what", "why", "impact", "tags",
               "related_files", "details"}
    for note in notes:
        assert set(note) == allowed, note["id"]
        assert all(isinstance(note[f], list) for f in ("tags", "related_files"))
        assert len(note["title"]) <= notes_dataset.TITLE_CHARS


def test_checker_catches_overlap_and_bad_rows():
    note = {"id": "n1", "project": "p", "category": "bug", "title": "Dropped webhooks",
            "what": "The relay was rewriting rows.", "why": None, "impact": None,
            "tags": ["queue"], "related_files": ["api/order_outbox.py"], "details": None}
    inflected = {"id": "q1", "question": "Why is the relay dropping things?", "evidence": ["n1"],
                 "kind": "paraphrase"}
    assert problems([note], [inflected]) == [
        "q1: marked paraphrase but shares ['drop', 'relai']"]
    split_identifier = {**inflected, "question": "What writes the outbox?"}
    assert "outbox" in " ".join(problems([note], [split_identifier]))
    clean = {**inflected, "question": "Why do callbacks vanish?"}
    assert problems([note], [clean]) == []
    bad = {**note, "id": "n2", "title": "x" * 61, "category": "idea"}
    found = problems([note, bad], [{**clean, "evidence": ["n1", "n9"]}])
    assert any("title has 61" in line for line in found)
    assert any("category 'idea'" in line for line in found)
    assert any("missing ['n9']" in line for line in found)


def test_stopwords_are_function_words_only():
    assert content_words("Why did the build fail on main?") == {"build", "fail", "main"}
    assert json.dumps(sorted(content_words("rewrite rewriting rewrites"))) == '["rewrit"]'


def test_fuse_tap_keeps_both_lists_and_the_products_answer():
    from types import SimpleNamespace

    from bench.notes_quality import FuseTap

    tap = FuseTap(SimpleNamespace(fuse_notes=lambda vector, text, top_k: ["fused", top_k]))
    assert tap(["v1", "v2"], ["t1"], 5) == ["fused", 5]
    assert tap(vector=["v3"], text=[], top_k=2) == ["fused", 2]
    assert tap.calls == [(["v1", "v2"], ["t1"]), (["v3"], [])]
