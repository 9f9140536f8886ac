"""The non-conversational retrieval set (bench/data/runbooks/): loading, integrity checks.

    .venv/bin/python bench/runbooks_dataset.py     # integrity + the paraphrase share

Operations records of a fictional company's platform (incidents, runbooks,
decisions), each one `write_episode`: its entities and its facts. A question counts
as paraphrased when it shares no content word with the text the engine indexes for
any of its evidence facts: the sentence and the names of its two endpoints
(memories.models.Fact.search_text). Words are compared with bench/notes_dataset.py's
normalisation (lowercase, split on non-alphanumerics, function words dropped,
inflections stripped).

Other sets in this format (bench/data/pyfaq, built by bench/pyfaq_dataset.py) label
their questions by where they come from instead (the FAQ page): a question's kind is
then its evidence's episode kind, and there is no word-overlap claim to check.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.notes_dataset import content_words

DATA = Path(__file__).resolve().parent / "data" / "runbooks"
EPISODE_KINDS = frozenset({"incident", "runbook", "decision"})
QUESTION_KINDS = frozenset({"exact", "keyword", "paraphrase"})
MIN_FACTS = 300
MIN_QUESTIONS = 100
MIN_PARAPHRASE_SHARE = 0.5
FACT_FIELDS = {"id", "episode", "source", "target", "relation_type", "fact", "confidence"}


def load(folder: Path = DATA) -> tuple[list[dict], list[dict], list[dict]]:
    """(episodes, facts, questions), each in file order."""
    def read(name: str) -> list[dict]:
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    return read("episodes.jsonl"), read("facts.jsonl"), read("questions.jsonl")


def fact_words(fact: dict) -> set[str]:
    return content_words(f"{fact['source']} {fact['fact']} {fact['target']}")


def shared_words(question: dict, facts_by_id: dict[str, dict]) -> set[str]:
    evidence: set[str] = set()
    for fact_id in question["evidence"]:
        evidence |= fact_words(facts_by_id[fact_id])
    return content_words(question["question"]) & evidence


def paraphrase_share(facts: list[dict], questions: list[dict]) -> float:
    by_id = {fact["id"]: fact for fact in facts}
    return sum(1 for q in questions if not shared_words(q, by_id)) / len(questions)


def problems(episodes: list[dict], facts: list[dict], questions: list[dict]) -> list[str]:
    """Everything wrong with the set, one line each; empty when it is sound."""
    found: list[str] = []
    for kind, ids in (("episode", [e["id"] for e in episodes]),
                      ("fact", [f["id"] for f in facts]),
                      ("question", [q["id"] for q in questions])):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            found.append(f"duplicate {kind} ids: {duplicates}")
    episodes_by_id = {e["id"]: e for e in episodes}
    # Runbooks' questions say how they relate to their evidence's words (checked below);
    # a set whose questions say none is labelled by its evidence's episodes instead.
    lexical = all(q["kind"] in QUESTION_KINDS for q in questions)
    for episode in episodes:
        if episode["kind"] not in EPISODE_KINDS and (lexical or not episode["kind"]):
            found.append(f"{episode['id']}: kind {episode['kind']!r}")
        if not any(f["episode"] == episode["id"] for f in facts):
            found.append(f"{episode['id']}: no facts")
    # One live edge per (source, target, relation_type) in a memory: a repeated key
    # would supersede an earlier fact instead of adding one.
    keys: dict[tuple[str, str, str], str] = {}
    for fact in facts:
        if set(fact) != FACT_FIELDS:
            found.append(f"{fact['id']}: fields {sorted(set(fact) ^ FACT_FIELDS)}")
            continue
        episode = episodes_by_id.get(fact["episode"])
        if episode is None:
            found.append(f"{fact['id']}: episode {fact['episode']!r} does not exist")
            continue
        names = {entity["name"] for entity in episode["entities"]}
        for end in ("source", "target"):
            if fact[end] not in names:
                found.append(f"{fact['id']}: {end} {fact[end]!r} is not an entity of "
                             f"{episode['id']}")
        key = (fact["source"].lower(), fact["target"].lower(), fact["relation_type"])
        if key in keys:
            found.append(f"{fact['id']}: same edge key as {keys[key]} (would supersede it)")
        keys[key] = fact["id"]
    by_id = {fact["id"]: fact for fact in facts}
    for question in questions:
        missing = [i for i in question["evidence"] if i not in by_id]
        if not question["evidence"] or missing:
            found.append(f"{question['id']}: evidence {question['evidence']} (missing {missing})")
            continue
        if not lexical:
            kinds = {episodes_by_id[by_id[i]["episode"]]["kind"] for i in question["evidence"]
                     if by_id[i]["episode"] in episodes_by_id}
            if kinds != {question["kind"]}:
                found.append(f"{question['id']}: kind {question['kind']!r}, its evidence's "
                             f"episodes {sorted(kinds)}")
            continue
        overlap = shared_words(question, by_id)
        if question["kind"] == "paraphrase" and overlap:
            found.append(f"{question['id']}: marked paraphrase but shares {sorted(overlap)}")
        if question["kind"] != "paraphrase" and not overlap:
            found.append(f"{question['id']}: marked {question['kind']} but shares no word")
    if lexical and questions and not found:
        share = paraphrase_share(facts, questions)
        if share < MIN_PARAPHRASE_SHARE:
            found.append(f"only {share:.0%} of questions share no word with their evidence")
    return found


def main() -> int:
    episodes, facts, questions = load()
    print(f"{len(episodes)} episodes, {len(facts)} facts, {len(questions)} questions")
    for kind in sorted(EPISODE_KINDS):
        chosen = [e for e in episodes if e["kind"] == kind]
        print(f"  {kind}: {len(chosen)} records, "
              f"{sum(1 for f in facts if f['episode'] in {e['id'] for e in chosen})} facts")
    kinds = {k: sum(1 for q in questions if q["kind"] == k) for k in sorted(QUESTION_KINDS)}
    print("  question kinds: " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    wrong = problems(episodes, facts, questions)
    for line in wrong:
        print(f"PROBLEM {line}")
    share = paraphrase_share(facts, questions)
    print(f"questions sharing no content word with their evidence: {share:.1%} "
          f"(required >= {MIN_PARAPHRASE_SHARE:.0%})")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
