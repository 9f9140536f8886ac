"""The Python FAQ retrieval set is sound and built by its stated rules (issue 42).

The committed files are checked as they are (no Debian package needed); the builder's
rules on a small made-up page in Sphinx's shape (tests/bench/data/pyfaq_html); and,
where python3.11-doc is installed, that building again gives the committed files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import pyfaq_dataset, runbooks_dataset
from bench.notes_dataset import content_words
from bench.pyfaq_dataset import EVIDENCE_SHORT, FACT_CHARS, PAGES, build, write
from bench.runbooks_dataset import load, problems

FIXTURE = Path(__file__).resolve().parent / "data" / "pyfaq_html"


@pytest.fixture(scope="module")
def dataset():
    return load(pyfaq_dataset.OUT)


@pytest.fixture(scope="module")
def tiny():
    return build(FIXTURE, ("programming", "design"))


def test_the_set_has_no_problems(dataset):
    assert problems(*dataset) == []


def test_it_is_larger_than_the_runbooks_set_with_every_faq_page_a_kind(dataset):
    episodes, facts, questions = dataset
    _, runbook_facts, runbook_questions = load()
    faq_facts = [f for f in facts if f["episode"].startswith("faq-")]
    assert len(faq_facts) > len(runbook_facts)
    assert len(questions) > len(runbook_questions)
    assert {q["kind"] for q in questions} == set(PAGES)
    assert {e["kind"] for e in episodes} == {*PAGES, "howto"}
    # Distractors answer nothing; the FAQ's entries each answer their own question.
    asked = {f["episode"] for q in questions for f in faq_facts if f["id"] in q["evidence"]}
    assert asked == {e["id"] for e in episodes if e["kind"] != "howto"}


def test_no_fact_repeats_its_question_and_no_name_carries_a_word(dataset):
    episodes, facts, questions = dataset
    by_id = {f["id"]: f for f in facts}
    for question in questions:
        episode = by_id[question["evidence"][0]]["episode"]
        heading = question["question"].casefold()
        assert not any(heading in f["fact"].casefold() for f in facts if f["episode"] == episode)
    for episode in episodes:
        for entity in episode["entities"]:
            assert re.fullmatch(r"py(faq|howto)-p?\d+", entity["name"]), entity
    assert all(len(f["fact"]) <= FACT_CHARS for f in facts)


def test_evidence_is_the_first_fact_and_the_second_after_a_short_lead_in(dataset):
    _, facts, questions = dataset
    by_id = {f["id"]: f for f in facts}
    for question in questions:
        episode = by_id[question["evidence"][0]]["episode"]
        answer = [f for f in facts if f["episode"] == episode]
        expected = answer[:2] if len(answer) > 1 and len(answer[0]["fact"]) < EVIDENCE_SHORT \
            else answer[:1]
        assert question["evidence"] == [f["id"] for f in expected], question["id"]


def test_every_episode_is_a_valid_write_episode(dataset):
    from bench.runbooks_quality import episode_arguments
    from tools.parsing import parse
    from tools.write_episode import WriteEpisodeArgs

    episodes, facts, _ = dataset
    for episode in episodes:
        parsed = parse(WriteEpisodeArgs, episode_arguments(episode, facts, memory="faq"))
        assert len(parsed.facts) == sum(1 for f in facts if f["episode"] == episode["id"])


def test_builder_drops_pointers_and_empty_answers_and_skips_headings_over_entries(tiny):
    assert tiny.found == {"programming": 6, "design": 1}
    assert tiny.pointers["programming"] == ["Where is the answer?", "Is there a web page?"]
    assert tiny.empty["programming"] == ["What is left unanswered?"]
    assert [q["question"] for q in tiny.questions] == [
        "Is there a debugger?", "How do I count the lines of a file?", "Why is my loop slow?",
        "Why are tuples immutable?"]
    assert [q["kind"] for q in tiny.questions] == ["programming"] * 3 + ["design"]
    assert tiny.long_code == 1
    assert problems(tiny.episodes, tiny.facts, tiny.questions) == []


def test_builder_turns_lists_code_and_boxes_into_sentences(tiny):
    text = {f["id"]: f["fact"] for f in tiny.facts}
    assert text["faq-programming-001-03"] == (
        "Editors with graphical stepping include: Tortoise Studio; Hare Edit")
    # The sentence runs on across the short sample; the long listing is left out.
    assert text["faq-programming-002-01"] == (
        "Iterate over the open file and add one per line, for instance "
        "total = sum(1 for _ in f) which never holds the whole file in memory.")
    assert text["faq-programming-002-02"] == "See also: The reading files tutorial."
    assert not any("LONG_LISTING" in t for t in text.values())
    assert text["faq-design-001-02"] == (
        "A quoted remark from a mailing list, kept as its own paragraph.")
    assert text["howto-counting-001-02"] == "most_common: the items with the highest counts"


def test_builder_splits_a_long_paragraph_at_a_sentence_end(tiny):
    pieces = [f["fact"] for f in tiny.facts if f["episode"] == "faq-programming-003"]
    assert len(pieces) == 2
    assert all(len(p) <= FACT_CHARS and p.endswith(".") for p in pieces)
    assert pieces[1] == "Caching results that are computed again and again often helps most of all."


def test_builder_evidence_and_opaque_endpoints(tiny):
    evidence = {q["question"]: q["evidence"] for q in tiny.questions}
    # "Yes." says nothing by itself: the paragraph after it is evidence too.
    assert evidence["Is there a debugger?"] == ["faq-programming-001-01", "faq-programming-001-02"]
    assert evidence["Why is my loop slow?"] == ["faq-programming-003-01"]
    first = tiny.facts[0]
    assert (first["source"], first["target"], first["relation_type"]) == (
        "pyfaq-001", "pyfaq-p1", "part 01")
    howto = [e for e in tiny.episodes if e["kind"] == "howto"]
    assert [e["id"] for e in howto] == ["howto-counting-001"]
    for question in tiny.questions:
        names = {e["name"] for e in tiny.episodes for e in e["entities"]}
        assert not content_words(" ".join(names)) & content_words(question["question"])


def test_checker_holds_page_labels_to_their_evidence():
    episode = {"id": "faq-design-001", "kind": "design",
               "entities": [{"name": "pyfaq-001", "type": "faq entry"},
                            {"name": "pyfaq-p1", "type": "faq page"}]}
    fact = {"id": "faq-design-001-01", "episode": "faq-design-001", "source": "pyfaq-001",
            "target": "pyfaq-p1", "relation_type": "part 01", "fact": "Keys must hash.",
            "confidence": "extracted"}
    question = {"id": "q001", "question": "Why?", "evidence": ["faq-design-001-01"],
                "kind": "design"}
    assert problems([episode], [fact], [question]) == []
    # A page label must be its evidence's page; a lexical label among page labels is a slip.
    assert problems([episode], [fact], [{**question, "kind": "library"}]) == [
        "q001: kind 'library', its evidence's episodes ['design']"]
    found = problems([episode], [fact], [question, {**question, "id": "q002", "kind": "keyword"}])
    assert found == ["q002: kind 'keyword', its evidence's episodes ['design']"]
    # The runbooks set's own rules still hold when every label is lexical.
    assert runbooks_dataset.EPISODE_KINDS.isdisjoint(PAGES)
    assert problems([episode], [fact], [{**question, "kind": "paraphrase"}]) == [
        "faq-design-001: kind 'design'"]


@pytest.mark.skipif(not (pyfaq_dataset.HTML / "faq").is_dir(),
                    reason="python3.11-doc is not installed")
def test_building_from_the_installed_docs_gives_the_committed_files(tmp_path):
    write(build(), tmp_path)
    for name in ("episodes.jsonl", "facts.jsonl", "questions.jsonl"):
        assert (tmp_path / name).read_bytes() == (pyfaq_dataset.OUT / name).read_bytes(), name
