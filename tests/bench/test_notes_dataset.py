"""The note search-quality sets are sound: bench/notes_quality.py's figures rest on them."""

from __future__ import annotations

import json

import pytest

from bench import notes_dataset
from bench.notes_dataset import content_words, load, paraphrase_share, problems


@pytest.fixture(scope="module", params=notes_dataset.DATASETS, ids=lambda folder: folder.name)
def dataset(request):
    return load(request.param)


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


def test_the_team_set_is_a_year_of_four_projects():
    # Issue 12's second, blind set: a team's vault, bigger and spread over four projects.
    notes, questions = load(notes_dataset.DATA.parent / "notes-team")
    projects = {note["project"] for note in notes}
    assert len(notes) >= 240 and len(projects) == 4
    assert len(questions) >= 120
    project_of = {note["id"]: note["project"] for note in notes}
    asked_about = {project_of[note_id] for q in questions for note_id in q["evidence"]}
    assert asked_about == projects
    assert sum(1 for q in questions if len(q["evidence"]) == 2) >= 3
    kinds = {q["kind"] for q in questions}
    assert kinds == notes_dataset.KINDS


def test_a_question_sharing_nothing_must_be_marked_paraphrase():
    note = {"id": "n1", "project": "p", "category": "bug", "title": "Dropped webhooks",
            "what": "The relay lost rows.", "why": None, "impact": None, "tags": [],
            "related_files": [], "details": None}
    mislabelled = {"id": "q1", "question": "Why do callbacks vanish?", "evidence": ["n1"],
                   "kind": "keyword"}
    assert problems([note], [mislabelled]) == [
        "q1: marked keyword but shares no word with its evidence (mark it paraphrase)"]


def test_every_set_is_listed_and_present():
    # A set added under bench/data/ but not to DATASETS would escape these checks.
    folders = {p.parent for p in notes_dataset.DATA.parent.glob("*/notes.jsonl")}
    assert folders == set(notes_dataset.DATASETS)


def test_cli_checks_the_folder_given_with_data(capsys):
    folder = notes_dataset.DATA.parent / "notes-team"
    assert notes_dataset.main(["--data", str(folder)]) == 0
    notes, _ = load(folder)
    assert f"{len(notes)} notes" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        notes_dataset.main(["--data", str(folder / "absent")])


def test_stopwords_are_function_words_only():
    assert content_words("Why did the build fail on main?") == {"build", "fail", "main"}
    assert json.dumps(sorted(content_words("rewrite rewriting rewrites"))) == '["rewrit"]'


def test_fuse_tap_keeps_the_lists_the_word_matches_and_the_products_answer():
    from types import SimpleNamespace

    from bench.notes_quality import FuseTap

    tap = FuseTap(SimpleNamespace(
        fuse_notes=lambda vector, text, top_k, words=(): ["fused", top_k, len(words)]))
    assert tap(["v1", "v2"], ["t1"], 5, ["w1"]) == ["fused", 5, 1]
    assert tap(vector=["v3"], text=[], top_k=2) == ["fused", 2, 0]
    assert tap.calls == [(["v1", "v2"], ["t1"], ["w1"]), (["v3"], [], [])]
