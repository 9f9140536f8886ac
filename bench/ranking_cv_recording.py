"""The recording bench/ranking_cv.py re-fuses: every set written and asked on a fresh box,
and for each question what query_memory handed to `memories.search.hybrid.fuse`.

The sets: the LoCoMo dev conversations (the dialogue set, written and asked as
bench/locomo.py does) and the non-dialogue sets of COLLECTIONS, each in
bench/data/runbooks' format and written as bench/runbooks_quality.py writes it, each into a
memory of its own. A row per question: its set, group (LoCoMo: the conversation), evidence,
kind and question (recordings made before 2026-12-07 lack it), the tool's own hybrid list
and the candidate lists (bench/fusion.py's Recorded), all with the set's own ids. Per set
the recording also keeps a digest of the files it was recorded from, the fusion constants
the tool ranked with, and a token naming that recording of the set (ranking_cv's score
cache is keyed by it).

A set asked for that the recording lacks, or whose files have changed, is recorded on a
fresh box and added; the sets already there are kept. `again` (ranking_cv's --record)
starts a new recording of the sets asked for.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import re
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import mixed_dataset
from bench.fusion import FUSION_CONSTANTS, Recorded
from bench.locomo import DEFAULT_DATA
from bench.runbooks_quality import MEMORY
from bench.setup import CACHE

RECORDING = CACHE / "ranking_cv.pickle"
DIALOGUE = "locomo"


class Collection(NamedTuple):
    folder: Path
    memory: str
    # What is wrong with the set's files (runbooks' rules unless it says otherwise).
    check: Callable | None = None
    # A set built from others rather than committed: (its folder, the files of the sets
    # by name) -> writes it.
    build: Callable | None = None


DATA = Path(__file__).resolve().parent / "data"
# The non-dialogue sets, in bench/data/runbooks' format. A new one is a line here. "mixed"
# is many small memories (its episodes and questions name theirs), built from the others
# (bench/mixed_dataset.py).
COLLECTIONS = {"runbooks": Collection(DATA / "runbooks", MEMORY),
               "pyfaq": Collection(DATA / "pyfaq", "python-faq"),
               "mixed": Collection(mixed_dataset.OUT, "mixed", mixed_dataset.problems,
                                   mixed_dataset.ensure)}
DEFAULT_SOURCES = {DIALOGUE: DEFAULT_DATA} | {n: c.folder for n, c in COLLECTIONS.items()}


def digest(source: Path) -> str:
    """What a set was recorded from: the file, or the folder's .jsonl files."""
    files = sorted(source.glob("*.jsonl")) if source.is_dir() else [source]
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def relabel(recorded: Recorded, labels: dict[str, str]) -> Recorded:
    """The same lists with the set's own ids as fact ids (stable across runs, picklable).
    Every candidate list is relabelled, however many fuse is handed."""
    def swap(candidates):
        return [c._replace(fact_id=labels.get(str(c.fact_id), "?")) for c in candidates]

    return dataclasses.replace(recorded, **{
        field.name: swap(getattr(recorded, field.name)) for field in dataclasses.fields(recorded)
        if isinstance(getattr(recorded, field.name), list)})


def _ask_dialogue(principal, account, tap, cached, data: Path) -> list[dict]:
    from tqdm import tqdm

    from bench.locomo import CATEGORIES, evidence_of, load_conversation
    from bench.runbooks_quality import ask
    from memories.search.indexing import index_pending

    rows = []
    for sample in tqdm(json.loads(data.read_text()), desc="conversations", file=sys.stderr):
        memory = re.sub(r"[^a-z0-9_-]", "-", sample["sample_id"].lower())
        dia_by_fact = load_conversation(principal, account, sample, memory)
        index_pending()
        cached.save()
        known = set(dia_by_fact.values())
        for question in sample["qa"]:
            evidence = evidence_of(question, known)
            if question.get("category") not in CATEGORIES or not evidence:
                continue
            hybrid, recorded = ask(principal, tap, memory, question["question"])
            rows.append({"set": DIALOGUE, "group": sample["sample_id"], "evidence": evidence,
                         "kind": CATEGORIES[question["category"]],
                         "question": question["question"],
                         "hybrid": [dia_by_fact.get(i, "?") for i in hybrid],
                         "recorded": relabel(recorded, dia_by_fact)})
    return rows


def _ask_collection(principal, account, tap, name: str, folder: Path) -> list[dict]:
    from tqdm import tqdm

    from bench.runbooks_dataset import problems as runbooks_problems
    from bench.runbooks_quality import ask, load_into

    collection = COLLECTIONS[name]
    print(f"{name}: writing and indexing {folder}", file=sys.stderr)
    set_id_of, questions = load_into(principal, account, folder, memory=collection.memory,
                                     check=collection.check or runbooks_problems)
    rows = []
    for question in tqdm(questions, desc=name, file=sys.stderr):
        memory = question.get("memory", collection.memory)
        hybrid, recorded = ask(principal, tap, memory, question["question"])
        rows.append({"set": name, "group": question.get("memory", name),
                     "evidence": question["evidence"],
                     "kind": question["kind"], "question": question["question"],
                     "hybrid": [set_id_of.get(i, "?") for i in hybrid],
                     "recorded": relabel(recorded, set_id_of),
                     # A question taken from another set (mixed): which, and its conversation
                     # or episode there (ranking_cv keeps it in that question's fold).
                     "origin": (question["origin"], question["group"])
                     if "origin" in question else None})
    return rows


def record(sources: dict[str, Path]) -> tuple[list[dict], dict[str, dict]]:
    """Each set of `sources` (name -> its file or folder) written and asked on one fresh box:
    (rows, what each set was recorded from and with)."""
    from bench.fusion import FusionTap
    from bench.setup import bench_principal, fresh_instance, use_cached_embedder

    fresh_instance(indexing="manual")
    cached = use_cached_embedder(queries_too=True)
    from memories.search import hybrid as search

    principal, account = bench_principal()
    tap = FusionTap(search).install()
    rows: list[dict] = []
    about: dict[str, dict] = {}
    for name, source in sources.items():
        if name == DIALOGUE:
            rows += _ask_dialogue(principal, account, tap, cached, source)
        else:
            rows += _ask_collection(principal, account, tap, name, source)
        cached.save()
        about[name] = {"source": digest(source), "path": str(source), "token": uuid.uuid4().hex,
                       "constants": {c: getattr(search, c) for c in FUSION_CONSTANTS}}
    return rows, about


# A recording starts with this line, then what each set was recorded from and with (plain
# data, readable before Django is set up, which a set still to record needs first), then the
# rows. Issue 13's recordings were one pickled dict: LoCoMo's and runbooks' rows and constants.
MAGIC = b"ranking_cv recording 2\n"


def _read_about() -> dict[str, dict]:
    if not RECORDING.exists():
        return {}
    with RECORDING.open("rb") as f:
        if f.readline() == MAGIC:
            return pickle.load(f)
    # Issue 13's format: no record of the files, so taken as recorded from the default ones
    # (--record if not); its constants are read with its rows.
    token = hashlib.sha256(RECORDING.read_bytes()).hexdigest()
    print(f"{RECORDING}: an older recording of {DIALOGUE} and runbooks, taken as recorded from "
          "the default files", file=sys.stderr)
    return {name: {"source": DEFAULT_SOURCES[name].exists() and digest(DEFAULT_SOURCES[name]),
                   "path": str(DEFAULT_SOURCES[name]),
                   "token": f"{token}-{name}", "constants": None}
            for name in (DIALOGUE, "runbooks")}


def _read_rows(about: dict[str, dict]) -> list[dict]:
    """The recording's rows (Django set up: they hold the engine's candidates)."""
    with RECORDING.open("rb") as f:
        if f.readline() == MAGIC:
            pickle.load(f)
            return pickle.load(f)
    recording = pickle.loads(RECORDING.read_bytes())
    if not isinstance(recording, dict):
        sys.exit(f"{RECORDING} was recorded by an older version of this bench: run it "
                 "with --record")
    for name in about:
        about[name]["constants"] = recording["constants"]
    return recording["rows"]


def recording(sources: dict[str, Path], *, again: bool) -> tuple[list[dict], dict[str, dict]]:
    """The rows of the sets in `sources`, grouped by set in that order, and what each was
    recorded from and with; records what is missing or out of date first."""
    about = {} if again else _read_about()
    stale = {name: source for name, source in sources.items()
             if about.get(name, {}).get("source") != digest(source)}
    for name in stale:
        if name in about:
            print(f"{name}: {sources[name]} differs from what was recorded "
                  f"({about[name]['path']}): recording it again", file=sys.stderr)
    if stale:
        added, added_about = record(stale)  # sets Django up on the fresh box
    else:
        added, added_about = [], {}
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
        import django

        django.setup()
    rows = [] if again or not about else _read_rows(about)
    if stale:
        rows = [row for row in rows if row["set"] not in stale] + added
        about |= added_about
        CACHE.mkdir(exist_ok=True)
        RECORDING.write_bytes(MAGIC + pickle.dumps(about) + pickle.dumps(rows))
    kept = [name for name in sources if name not in stale]
    print("; ".join(part for part in (
        stale and f"recorded now: {', '.join(stale)}",
        kept and f"from the recording: {', '.join(kept)}") if part))
    return [row for name in sources for row in rows if row["set"] == name], about
