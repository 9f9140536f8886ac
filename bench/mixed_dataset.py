"""Builds the "mixed" set: many small memories an agent wrote several things into at once
(issue 42).

    .venv/bin/python bench/mixed_dataset.py [--out DIR] [--runbooks DIR] [--pyfaq DIR]
                                            [--locomo FILE]

The three other sets each fill one memory with one kind of material, written one record,
FAQ entry or session per episode. An agent's memory is often small and mixed: tens of facts,
and an episode holds whatever it was told at the time, so a fact's neighbours (which the
indexer embeds it with, and the neighbour bonus counts) may be about something else
entirely. The fusion constants chosen on the three sets alone put an unrelated fact first
on such a memory (tests/web/test_explorer.py, "who teaches Grace about compilers"), and none
of them could show it. This set is built mechanically from their material; nothing in it is
written by us, so nothing is tuned to a ranking:

- Units: each runbooks record (all its facts), each FAQ entry of bench/data/pyfaq that a
  question asks about (its facts; the HOWTO distractors are left out), and LoCoMo windows:
  WINDOW consecutive turns of one session of the dev conversations, written as
  bench/locomo.py writes turns, placed around the evidence of a question whose evidence
  lies within one session and spans at most WINDOW turns, not overlapping another window
  (questions taken in the file's order, the window's start drawn at random).
- Memories: one per runbooks record (48), each given that record, a LoCoMo window (dealt in
  turn, conversations alternating) and the FAQ entries dealt round-robin after a shuffle;
  every unit is used once.
- Episodes: while a memory's units have facts left, an episode takes the next CHUNK
  (1-3, at random) facts of each of 2-3 units (the one with most facts left, the others
  drawn at random) and puts those chunks one after the other in random order; when one
  unit alone has facts left, they make the last episode. So every episode but a memory's
  last mixes sources, and each unit is spread over several episodes in its own order. An
  episode's entities are those of its facts' ends.
- Questions: every question of a source set whose evidence all landed in one memory (a
  record's and an entry's always do; a LoCoMo question when its evidence is inside that
  memory's window), asked in that memory, with the source's evidence. Its kind is the set
  it comes from; `origin` and `group` say which set and which conversation (LoCoMo) or
  episode (the others) it was asked of there, so bench/ranking_cv.py keeps a question in
  the fold its source question is in (no question is chosen on in one set and scored in
  another).

Seeded (SEED): the same sources give byte-identical files. LoCoMo may not be shipped (its
README), so the set is not committed: bench/ranking_cv.py builds it into its cache.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.locomo import CATEGORIES, DEFAULT_DATA, evidence_of, sessions
from bench.runbooks_dataset import DATA as RUNBOOKS
from bench.runbooks_dataset import load
from bench.setup import CACHE

PYFAQ = RUNBOOKS.parent / "pyfaq"
OUT = CACHE / "mixed"
SEED = 42
WINDOW = 10
CHUNK = (1, 3)
UNITS_PER_EPISODE = (2, 3)
# The sets a question can come from, and the kind (origin) of its questions here.
ORIGINS = ("locomo", "runbooks", "pyfaq")


def _unit(origin: str, group: str, facts: list[dict], entities: dict[str, dict]) -> dict:
    return {"origin": origin, "group": group, "facts": facts, "entities": entities}


def _collection_units(origin: str, folder: Path, asked_only: bool) -> tuple[list[dict], list]:
    """A unit per episode of a set in runbooks' format (with asked_only, those a question
    asks about), facts re-labelled `<origin>/<id>`; and its questions."""
    episodes, facts, questions = load(folder)
    by_fact = {f["id"]: f["episode"] for f in facts}
    asked = {by_fact[e] for q in questions for e in q["evidence"]}
    units = []
    for episode in episodes:
        if asked_only and episode["id"] not in asked:
            continue
        own = [f | {"id": f"{origin}/{f['id']}"} for f in facts if f["episode"] == episode["id"]]
        units.append(_unit(origin, episode["id"], own,
                           {e["name"]: e for e in episode["entities"]}))
    return units, [q | {"evidence": [f"{origin}/{e}" for e in q["evidence"]],
                        "group": by_fact[q["evidence"][0]]} for q in questions]


def _locomo_units(data: Path, rng: random.Random,
                  window: int) -> tuple[list[list[dict]], list[dict]]:
    """Per conversation, its windows (in the file's order of the questions they were placed
    for); and its questions (categories 1-4) with their evidence as fact ids."""
    per_conversation, questions = [], []
    for sample in json.loads(data.read_text()):
        conversation = sample["conversation"]
        speakers = {conversation[k]: {"name": conversation[k], "type": "person"}
                    for k in ("speaker_a", "speaker_b")}
        turns = {}  # dia_id -> (session, index in it, fact)
        for number, facts in sessions(sample):
            for index, fact in enumerate(facts):
                dia = fact["relation_type"].removeprefix("said ")
                turns[dia] = (number, index, fact | {"id": f"locomo/{sample['sample_id']}/{dia}"})
        by_session: dict[int, list[dict]] = {}
        for number, _, fact in turns.values():
            by_session.setdefault(number, []).append(fact)
        taken: dict[int, list[tuple[int, int]]] = {}
        windows = []
        for n, question in enumerate(sample["qa"]):
            evidence = evidence_of(question, set(turns))
            if question.get("category") not in CATEGORIES or not evidence:
                continue
            questions.append({"id": f"{sample['sample_id']}/q{n:03d}",
                              "question": question["question"],
                              "evidence": [turns[e][2]["id"] for e in evidence],
                              "group": sample["sample_id"]})
            places = {turns[e][0] for e in evidence}
            if len(places) != 1:
                continue
            session = places.pop()
            low = min(turns[e][1] for e in evidence)
            high = max(turns[e][1] for e in evidence)
            length = len(by_session[session])
            if high - low + 1 > window or length < window:
                continue
            start = rng.randint(max(0, high - window + 1), min(low, length - window))
            span = (start, start + window)
            if any(a < span[1] and span[0] < b for a, b in taken.get(session, [])):
                continue
            taken.setdefault(session, []).append(span)
            windows.append(_unit("locomo", sample["sample_id"],
                                 by_session[session][span[0]:span[1]], speakers))
        per_conversation.append(windows)
    return per_conversation, questions


def _episodes(memory: str, units: list[dict], rng: random.Random) -> tuple[list, list]:
    """A memory's units dealt into mixed episodes: (episodes, facts)."""
    queues = [list(unit["facts"]) for unit in units]
    episodes, facts = [], []
    while any(queues):
        left = sorted((i for i, queue in enumerate(queues) if queue),
                      key=lambda i: -len(queues[i]))
        # The unit with most facts left and others at random, so units run out together.
        chosen = left[:1] + rng.sample(left[1:], min(len(left) - 1,
                                                     rng.randint(*UNITS_PER_EPISODE) - 1))
        rng.shuffle(chosen)
        episode_id = f"{memory}/e{len(episodes) + 1:02d}"
        entities: dict[str, dict] = {}
        for i in chosen:
            # The last unit left goes whole: an episode of one source ends the memory.
            size = rng.randint(*CHUNK) if len(left) > 1 else len(queues[i])
            for fact in queues[i][:size]:
                facts.append(fact | {"episode": episode_id})
                for end in ("source", "target"):
                    entities.setdefault(fact[end], units[i]["entities"][fact[end]])
            del queues[i][:size]
        episodes.append({"id": episode_id, "kind": "mixed", "memory": memory,
                         "entities": list(entities.values())})
    return episodes, facts


def build(runbooks: Path = RUNBOOKS, pyfaq: Path = PYFAQ, locomo: Path = DEFAULT_DATA,
          seed: int = SEED, window: int = WINDOW) -> tuple[list[dict], list[dict], list[dict]]:
    """(episodes, facts, questions) of the mixed set, in runbooks' format plus each
    episode's and question's `memory` and each question's `origin` and `group`."""
    rng = random.Random(seed)
    records, record_questions = _collection_units("runbooks", runbooks, asked_only=False)
    entries, entry_questions = _collection_units("pyfaq", pyfaq, asked_only=True)
    per_conversation, dialogue_questions = _locomo_units(locomo, rng, window)
    # Conversations alternate, as many rounds as the one with fewest windows allows.
    windows = [w for group in zip(*per_conversation, strict=False) for w in group]
    rng.shuffle(entries)
    memories = [f"mixed-{n + 1:02d}" for n in range(len(records))]
    units_of = {memory: [record] for memory, record in zip(memories, records, strict=True)}
    for memory, window in zip(memories, windows, strict=False):  # the first 48
        units_of[memory].append(window)
    for n, entry in enumerate(entries):
        units_of[memories[n % len(memories)]].append(entry)
    episodes, facts, questions = [], [], []
    source_questions = {"runbooks": record_questions, "pyfaq": entry_questions,
                        "locomo": dialogue_questions}
    for memory in memories:
        made, written = _episodes(memory, units_of[memory], rng)
        episodes += made
        facts += written
        here = {f["id"] for f in written}
        for origin in ORIGINS:
            for question in source_questions[origin]:
                if set(question["evidence"]) <= here:
                    questions.append({"id": f"{memory}/{origin}/{question['id']}",
                                      "question": question["question"],
                                      "evidence": question["evidence"], "kind": origin,
                                      "memory": memory, "origin": origin,
                                      "group": question["group"]})
    return episodes, facts, questions


def problems(episodes: list[dict], facts: list[dict], questions: list[dict]) -> list[str]:
    """Everything wrong with the set, one line each; empty when it is sound."""
    found = []
    for kind, items in (("episode", episodes), ("fact", facts), ("question", questions)):
        ids = [item["id"] for item in items]
        if len(set(ids)) != len(ids):
            found.append(f"duplicate {kind} ids")
    episode = {e["id"]: e for e in episodes}
    memory_of = {}
    keys = set()
    for fact in facts:
        if fact["episode"] not in episode:
            found.append(f"{fact['id']}: no episode {fact['episode']}")
            continue
        memory = memory_of[fact["id"]] = episode[fact["episode"]]["memory"]
        names = {e["name"] for e in episode[fact["episode"]]["entities"]}
        if not {fact["source"], fact["target"]} <= names:
            found.append(f"{fact['id']}: an end is not an entity of its episode")
        key = (memory, fact["source"].lower(), fact["target"].lower(), fact["relation_type"])
        if key in keys:
            found.append(f"{fact['id']}: its edge key is another fact's (would supersede it)")
        keys.add(key)
    for question in questions:
        if {memory_of.get(e) for e in question["evidence"]} != {question["memory"]}:
            found.append(f"{question['id']}: evidence not all in {question['memory']}")
    return found


def write(out: Path, episodes: list[dict], facts: list[dict], questions: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, items in (("episodes", episodes), ("facts", facts), ("questions", questions)):
        text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        path = out / f"{name}.jsonl"
        if not path.exists() or path.read_text() != text:  # unchanged files keep their digest
            path.write_text(text)


def ensure(out: Path, sources: dict[str, Path]) -> Path:
    """The set built into `out` from the files of the sets it is made of (`sources`, by set
    name; the default files for those it lacks): what bench/ranking_cv.py reads."""
    made = build(**{origin: path for origin, path in sources.items() if origin in ORIGINS})
    wrong = problems(*made)
    if wrong:
        sys.exit("the mixed set has problems:\n" + "\n".join(wrong))
    write(out, *made)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--runbooks", type=Path, default=RUNBOOKS)
    parser.add_argument("--pyfaq", type=Path, default=PYFAQ)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    episodes, facts, questions = build(args.runbooks, args.pyfaq, args.locomo)
    wrong = problems(episodes, facts, questions)
    for line in wrong:
        print(line)
    write(args.out, episodes, facts, questions)
    memories = sorted({e["memory"] for e in episodes})
    sizes = [sum(1 for f in facts if f["episode"].startswith(m + "/")) for m in memories]
    print(f"{args.out}: {len(memories)} memories of {min(sizes)}-{max(sizes)} facts "
          f"({len(facts)}), {len(episodes)} episodes, {len(questions)} questions ("
          + ", ".join(f"{sum(1 for q in questions if q['origin'] == o)} {o}" for o in ORIGINS)
          + ")")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
