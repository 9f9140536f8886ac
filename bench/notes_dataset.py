"""The note search-quality sets (bench/data/notes*/): loading, integrity checks, word overlap.

    .venv/bin/python bench/notes_dataset.py                            # the first set
    .venv/bin/python bench/notes_dataset.py --data bench/data/notes-team  # another set

A question counts as paraphrased when it shares no content word with any field of
its evidence notes (title, what, why, impact, tags, category, related_files,
details, project). Words are compared after a deliberately simple normalisation:
lowercase, split on anything that is not a letter or digit (so `order_id` and
`Order-ready` are two words each), drop English function words, and strip
inflections (plurals, -ed, -ing, a final -e or -y) so that `dropped` and
`dropping`, or `rewrite` and `rewriting`, count as the same word. The stopword list
holds function words only, never topic words, so it cannot hide an overlap.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "notes"
# Every set in the repository; tests check each one the same way.
DATASETS = (DATA, DATA.parent / "notes-team")
CATEGORIES = frozenset({"decision", "bug", "pattern", "learning", "context"})
KINDS = frozenset({"exact", "keyword", "paraphrase"})
TITLE_CHARS = 60
NOTE_TEXT_FIELDS = ("project", "category", "title", "what", "why", "impact", "details")
NOTE_LIST_FIELDS = ("tags", "related_files")
MIN_PARAPHRASE_SHARE = 0.5

# English function words (the NLTK list plus contractions' leftovers and question
# auxiliaries); no nouns, verbs or adjectives that could carry a topic.
_STOPWORD_TEXT = """
a about above after again against all am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn
doing don down during each few for from further had hadn has hasn have haven having he
her here hers herself him himself his how i if in into is isn it its itself just ll me
might mightn more most must mustn my myself needn no nor not now of off on once only or
other our ours ourselves out over own re s same shan she should shouldn so some such t
than that the their theirs them themselves then there these they this those through to
too under until up ve very was wasn we were weren what when where which while who whom
why will with won would wouldn y you your yours yourself yourselves d m o ain whats
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[a-z0-9]+")
_VOWEL = re.compile(r"[aeiouy]")


def stem(word: str) -> str:
    """Strip common English inflections (a small subset of Porter's step 1)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-3] + "i"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
            word = base
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if len(word) > 3 and word[-1] in "ey":
        word = word[:-1] + ("i" if word[-1] == "y" else "")
    return word


def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def note_words(note: dict) -> set[str]:
    words: set[str] = set()
    for field in NOTE_TEXT_FIELDS:
        words |= content_words(note.get(field) or "")
    for field in NOTE_LIST_FIELDS:
        for item in note.get(field) or []:
            words |= content_words(item)
    return words


def load(folder: Path = DATA) -> tuple[list[dict], list[dict]]:
    def read(name: str) -> list[dict]:
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    return read("notes.jsonl"), read("questions.jsonl")


def shared_words(question: dict, notes_by_id: dict[str, dict]) -> set[str]:
    evidence_words: set[str] = set()
    for note_id in question["evidence"]:
        evidence_words |= note_words(notes_by_id[note_id])
    return content_words(question["question"]) & evidence_words


def paraphrase_share(notes: list[dict], questions: list[dict]) -> float:
    by_id = {note["id"]: note for note in notes}
    disjoint = sum(1 for q in questions if not shared_words(q, by_id))
    return disjoint / len(questions)


def problems(notes: list[dict], questions: list[dict]) -> list[str]:
    """Everything wrong with the set, one line each; empty when it is sound."""
    found: list[str] = []
    note_ids = [note["id"] for note in notes]
    question_ids = [question["id"] for question in questions]
    for kind, ids in (("note", note_ids), ("question", question_ids)):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            found.append(f"duplicate {kind} ids: {duplicates}")
    by_id = {note["id"]: note for note in notes}
    titles = [(note["project"], note["title"]) for note in notes]
    if len(set(titles)) != len(titles):
        found.append("two notes share a project and title (a save would update, not add)")
    for note in notes:
        if not note.get("what"):
            found.append(f"{note['id']}: `what` is required")
        if len(note["title"]) > TITLE_CHARS:
            found.append(f"{note['id']}: title has {len(note['title'])} characters")
        if note["category"] not in CATEGORIES:
            found.append(f"{note['id']}: category {note['category']!r}")
    for question in questions:
        missing = [i for i in question["evidence"] if i not in by_id]
        if not question["evidence"] or missing:
            found.append(f"{question['id']}: evidence {question['evidence']} (missing {missing})")
            continue
        if question["kind"] not in KINDS:
            found.append(f"{question['id']}: kind {question['kind']!r}")
        overlap = shared_words(question, by_id)
        if question["kind"] == "paraphrase" and overlap:
            found.append(f"{question['id']}: marked paraphrase but shares {sorted(overlap)}")
        if question["kind"] != "paraphrase" and not overlap:
            found.append(f"{question['id']}: marked {question['kind']} but shares no word "
                         "with its evidence (mark it paraphrase)")
    if questions and not found:
        share = paraphrase_share(notes, questions)
        if share < MIN_PARAPHRASE_SHARE:
            found.append(f"only {share:.0%} of questions share no word with their evidence")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a note search-quality set.")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="folder with notes.jsonl and questions.jsonl (default: %(default)s)")
    folder = parser.parse_args(argv).data
    if not (folder / "notes.jsonl").is_file() or not (folder / "questions.jsonl").is_file():
        parser.error(f"--data {folder}: needs notes.jsonl and questions.jsonl in that folder")
    notes, questions = load(folder)
    projects = sorted({note["project"] for note in notes})
    print(f"{len(notes)} notes ({', '.join(projects)}), {len(questions)} questions")
    for project in projects:
        print(f"  {project}: {sum(1 for n in notes if n['project'] == project)} notes")
    kinds = {kind: sum(1 for q in questions if q["kind"] == kind) for kind in sorted(KINDS)}
    print("  question kinds: " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    wrong = problems(notes, questions)
    for line in wrong:
        print(f"PROBLEM {line}")
    share = paraphrase_share(notes, questions)
    print(f"questions sharing no content word with their evidence: {share:.1%} "
          f"(required >= {MIN_PARAPHRASE_SHARE:.0%})")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
