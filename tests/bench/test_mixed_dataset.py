"""The mixed set (many small memories whose episodes mix unrelated material) is built by its
stated rules from the other sets' files (issue 42).

Built here from the committed runbooks and Python FAQ sets and the made-up LoCoMo
conversations of tests/bench/data (their sessions are three turns long, so with a window of
three); where the LoCoMo dev set is present, from it as bench/ranking_cv.py builds it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench import mixed_dataset
from bench.mixed_dataset import build, problems, write
from bench.runbooks_dataset import load

TINY_LOCOMO = Path(__file__).resolve().parent / "data" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def tiny():
    return build(locomo=TINY_LOCOMO, window=3)


def _origin(fact_id: str) -> str:
    return fact_id.split("/", 1)[0]


def _unit(fact_id: str) -> str:
    """A record, FAQ entry or LoCoMo session (here a session is one window) a fact is of."""
    return fact_id.rsplit(":" if _origin(fact_id) == "locomo" else "-", 1)[0]


def test_the_set_has_no_problems_and_asks_each_question_in_its_memory(tiny):
    episodes, facts, questions = tiny
    assert problems(episodes, facts, questions) == []
    memory_of = {e["id"]: e["memory"] for e in episodes}
    where = {f["id"]: memory_of[f["episode"]] for f in facts}
    for question in questions:
        assert {where[e] for e in question["evidence"]} == {question["memory"]}
        assert question["kind"] == question["origin"] == _origin(question["evidence"][0])


def test_every_source_fact_keeps_its_words_and_every_unit_lands_in_one_memory(tiny):
    episodes, facts, _ = tiny
    _, runbook_facts, _ = load(mixed_dataset.RUNBOOKS)
    _, faq_facts, faq_questions = load(mixed_dataset.PYFAQ)
    source = {f"runbooks/{f['id']}": f for f in runbook_facts}
    source |= {f"pyfaq/{f['id']}": f for f in faq_facts}
    for fact in facts:
        if fact["id"] in source:  # nothing rewritten: the same words, ends and key
            assert {k: fact[k] for k in ("fact", "source", "target", "relation_type")} == {
                k: source[fact["id"]][k] for k in ("fact", "source", "target", "relation_type")}
    written = {f["id"] for f in facts}
    # Every record, and every FAQ entry a question asks about, whole; no HOWTO distractor.
    assert {f"runbooks/{f['id']}" for f in runbook_facts} <= written
    asked = {f["episode"] for f in faq_facts for q in faq_questions
             if f["id"] in q["evidence"]}
    assert {i for i in written if i.startswith("pyfaq/")} == {
        f"pyfaq/{f['id']}" for f in faq_facts if f["episode"] in asked}
    memory_of = {e["id"]: e["memory"] for e in episodes}
    unit_memories: dict[str, set[str]] = {}
    for fact in facts:
        unit_memories.setdefault(_unit(fact["id"]), set()).add(memory_of[fact["episode"]])
    assert all(len(m) == 1 for m in unit_memories.values())


def test_episodes_mix_sources_and_keep_each_units_order(tiny):
    episodes, facts, _ = tiny
    by_episode: dict[str, list[dict]] = {}
    for fact in facts:
        by_episode.setdefault(fact["episode"], []).append(fact)
    last = {e["memory"]: e["id"] for e in episodes}
    for episode in episodes:
        units = {_unit(f["id"]) for f in by_episode[episode["id"]]}
        assert len(units) >= 2 or episode["id"] == last[episode["memory"]], episode["id"]
    order = [f["id"] for f in facts if f["id"].startswith("runbooks/inc-2041-")]
    assert order == sorted(order)
    # Each memory holds a record, at least one FAQ entry, and tens of facts at most.
    per_memory = Counter(e["memory"] for e in episodes for _ in by_episode[e["id"]])
    assert len(per_memory) == len(load(mixed_dataset.RUNBOOKS)[0])
    assert max(per_memory.values()) < 100


def test_questions_are_the_sources_own_whose_evidence_landed(tiny):
    _, _, questions = tiny
    _, _, runbook_questions = load(mixed_dataset.RUNBOOKS)
    _, _, faq_questions = load(mixed_dataset.PYFAQ)
    counts = Counter(q["origin"] for q in questions)
    assert counts["runbooks"] == len(runbook_questions)
    assert counts["pyfaq"] == len(faq_questions)
    texts = {q["question"] for q in runbook_questions + faq_questions}
    texts |= {q["question"] for sample in json.loads(TINY_LOCOMO.read_text())
              for q in sample["qa"]}
    assert all(q["question"] in texts for q in questions)
    # A LoCoMo question lands only where a window holds all its evidence: those of one
    # session within three turns (categories 1-4), never the one across two sessions.
    dialogue = [q for q in questions if q["origin"] == "locomo"]
    assert dialogue and all(len({e.split(":")[0] for e in q["evidence"]}) == 1
                            for q in dialogue)
    assert {q["group"] for q in dialogue} <= {f"tiny-{n}" for n in range(1, 6)}


def test_building_again_gives_the_same_files(tiny, tmp_path):
    write(tmp_path / "a", *tiny)
    write(tmp_path / "b", *build(locomo=TINY_LOCOMO, window=3))
    for name in ("episodes", "facts", "questions"):
        assert (tmp_path / "a" / f"{name}.jsonl").read_bytes() == (
            tmp_path / "b" / f"{name}.jsonl").read_bytes()
    assert build(locomo=TINY_LOCOMO, window=3, seed=7) != tiny

