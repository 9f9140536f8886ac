"""The operations retrieval set is sound: bench/runbooks_quality.py's figures rest on it."""

from __future__ import annotations

import pytest

from bench import runbooks_dataset
from bench.runbooks_dataset import load, paraphrase_share, problems


@pytest.fixture(scope="module")
def dataset():
    return load()


def test_the_set_has_no_problems(dataset):
    assert problems(*dataset) == []


def test_size_and_mix_match_issue_13(dataset):
    episodes, facts, questions = dataset
    assert len(facts) >= runbooks_dataset.MIN_FACTS
    assert len(questions) >= runbooks_dataset.MIN_QUESTIONS
    assert {e["kind"] for e in episodes} == runbooks_dataset.EPISODE_KINDS
    assert paraphrase_share(facts, questions) >= 0.5


def test_every_episode_is_a_valid_write_episode(dataset):
    from bench.runbooks_quality import episode_arguments
    from tools.parsing import parse
    from tools.write_episode import WriteEpisodeArgs

    episodes, facts, _ = dataset
    for episode in episodes:
        arguments = episode_arguments(episode, facts, memory="ops")
        parsed = parse(WriteEpisodeArgs, arguments)
        assert len(parsed.facts) == sum(1 for f in facts if f["episode"] == episode["id"])


def test_checker_catches_overlap_bad_endpoints_and_repeated_keys():
    episode = {"id": "INC-1", "kind": "incident", "date": "2026-01-01",
               "entities": [{"name": "INC-1", "type": "incident"},
                            {"name": "ledger-api", "type": "service"}]}
    fact = {"id": "inc-1-01", "episode": "INC-1", "source": "INC-1", "target": "ledger-api",
            "relation_type": "affected", "fact": "INC-1 made ledger-api return 503.",
            "confidence": "extracted"}
    # The endpoint's name is indexed with the sentence, so it counts as shared.
    named = {"id": "q1", "question": "Why was the ledger down?", "evidence": ["inc-1-01"],
             "kind": "paraphrase"}
    assert problems([episode], [fact], [named]) == [
        "q1: marked paraphrase but shares ['ledger']"]
    clean = {**named, "question": "Why was bookkeeping unavailable?"}
    assert problems([episode], [fact], [clean]) == []
    stray = {**fact, "id": "inc-1-02", "target": "pg-main"}
    repeated = {**fact, "id": "inc-1-03", "fact": "Another sentence."}
    found = problems([episode], [fact, stray, repeated],
                     [{**clean, "kind": "keyword"}, {**clean, "id": "q2", "evidence": ["x"]}])
    assert "inc-1-02: target 'pg-main' is not an entity of INC-1" in found
    assert "inc-1-03: same edge key as inc-1-01 (would supersede it)" in found
    assert "q1: marked keyword but shares no word" in found
    assert "q2: evidence ['x'] (missing ['x'])" in found
