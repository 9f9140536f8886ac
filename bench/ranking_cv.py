"""Cross-validated choice of the fusion constants (issue 13, "Generalization").

    .venv/bin/python bench/ranking_cv.py [--record] [--vary NAME ...] [--json PATH]
                                         [--data LOCOMO.json] [--runbooks DIR]

1. Record (once; cached in bench/.cache/ranking_cv.pickle, or under $ECHO_BENCH_CACHE;
   `--record` redoes it): on a fresh box, the LoCoMo dev conversations written and asked
   exactly as bench/locomo.py does, and the runbooks set as bench/runbooks_quality.py
   does; for every question, the two candidate lists and the named entities that
   query_memory hands to `memories.search.hybrid.fuse` (bench/fusion.py's tap).
2. Re-fuse offline: every setting of a grid over the constants fuse reads (RRF_K x
   TEXT_WEIGHT x ENTITY_WEIGHT x TEXT_COVERAGE_FLOOR x NEIGHBOUR_WEIGHT; NEIGHBOUR_SPAN
   stays as the product has it, and VECTOR_WEIGHT 1, since only the ratio of the two
   weights matters) is applied to the recorded lists with the product's own fuse and
   scored with recall@10. The scores are cached next to the recording, keyed by the
   recording, memories/search/hybrid.py's source and the constants outside the grid,
   so a second run re-fuses only settings it has not scored. `--vary NAME...` lets only
   those constants vary (the others stay as the product has them).
3. Five folds over both sets at once: fold i holds out LoCoMo conversation i and one
   fifth of the runbooks questions (grouped by the records their evidence comes from,
   so no record is chosen on and reported on). The setting is chosen on the other four
   folds of both sets and scored on the held-out fold, by one of two objectives:
   `guarded` (it decides: the highest LoCoMo recall@10 among the settings whose hybrid
   recall@10 on the runbooks questions chosen on is at least vector alone's there) or
   `both` (the mean of the two sets' recall@10, each set counting the same), and one of
   two rules: `best` (the highest objective) or `simplest` (the simplest setting within
   one standard error of the best, the error of the per-question paired difference;
   simpler = fewer departures from textbook reciprocal rank fusion: k = 60, equal
   weights, no entity or neighbour bonus, every word match voting). Held-out: every
   question scored by the setting its fold chose without seeing it. In-sample: the
   setting chosen on all five folds, scored on all of them. Text and vector alone involve
   no choice.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import itertools
import json
import math
import os
import pickle
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.fusion import FUSION_CONSTANTS, Recorded, refuse
from bench.setup import CACHE

RECORDING = CACHE / "ranking_cv.pickle"
SCORES = CACHE / "ranking_cv_scores.pickle"
GRID = {"RRF_K": (5, 10, 20, 60), "TEXT_WEIGHT": (0.5, 0.75, 1.0, 1.25),
        "ENTITY_WEIGHT": (0.0, 0.5, 1.0),
        "TEXT_COVERAGE_FLOOR": (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4),
        "NEIGHBOUR_WEIGHT": (0.0, 0.025, 0.05, 0.1)}
TEXTBOOK = {"RRF_K": 60, "TEXT_WEIGHT": 1.0, "ENTITY_WEIGHT": 0.0, "TEXT_COVERAGE_FLOOR": 0.0,
            "NEIGHBOUR_WEIGHT": 0.0}
FOLDS = 5
RUNBOOKS = Path(__file__).resolve().parent / "data/runbooks"


def settings() -> list[dict[str, float]]:
    names = list(GRID)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*GRID.values())]


def complexity(setting: dict[str, float]) -> tuple[int, float]:
    """How far a setting is from textbook fusion: the constants it changes, then by how much
    (k and the text weight on a log scale, the entity bonus as is)."""
    full = TEXTBOOK | setting
    changed = sum(1 for name, value in full.items() if value != TEXTBOOK[name])
    distance = (abs(math.log(full["RRF_K"] / TEXTBOOK["RRF_K"]))
                + abs(math.log(full["TEXT_WEIGHT"])) + full["ENTITY_WEIGHT"]
                + full["TEXT_COVERAGE_FLOOR"] + full["NEIGHBOUR_WEIGHT"])
    return changed, round(distance, 6)


def label(setting: dict[str, float]) -> str:
    full = TEXTBOOK | setting
    return (f"k={full['RRF_K']:g} text={full['TEXT_WEIGHT']:g} "
            f"entity={full['ENTITY_WEIGHT']:g} floor={full['TEXT_COVERAGE_FLOOR']:g} "
            f"neighbour={full['NEIGHBOUR_WEIGHT']:g}")


def relabel(recorded: Recorded, labels: dict[str, str]) -> Recorded:
    """The same lists with the set's own ids as fact ids (stable across runs, picklable)."""
    def swap(candidates):
        return [c._replace(fact_id=labels.get(str(c.fact_id), "?")) for c in candidates]

    return Recorded(swap(recorded.vector), swap(recorded.text), recorded.mentioned,
                    recorded.top_k)


def record(data: Path | None = None, runbooks: Path = RUNBOOKS) -> list[dict]:
    from bench.fusion import FusionTap
    from bench.locomo import CATEGORIES, DEFAULT_DATA, evidence_of, load_conversation
    from bench.runbooks_quality import MEMORY, ask, load_into
    from bench.setup import bench_principal, fresh_instance, use_cached_embedder

    fresh_instance(indexing="manual")
    cached = use_cached_embedder(queries_too=True)
    from tqdm import tqdm

    from memories.search import hybrid as search
    from memories.search.indexing import index_pending

    principal, account = bench_principal()
    tap = FusionTap(search).install()
    rows: list[dict] = []
    for sample in tqdm(json.loads((data or DEFAULT_DATA).read_text()), desc="conversations",
                       file=sys.stderr):
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
            rows.append({"set": "locomo", "group": sample["sample_id"], "evidence": evidence,
                         "kind": CATEGORIES[question["category"]],
                         "hybrid": [dia_by_fact.get(i, "?") for i in hybrid],
                         "recorded": relabel(recorded, dia_by_fact)})
    set_id_of, questions = load_into(principal, account, runbooks)
    cached.save()
    for question in questions:
        hybrid, recorded = ask(principal, tap, MEMORY, question["question"])
        rows.append({"set": "runbooks", "group": "ops", "evidence": question["evidence"],
                     "kind": question["kind"], "hybrid": [set_id_of.get(i, "?") for i in hybrid],
                     "recorded": relabel(recorded, set_id_of)})
    cached.save()
    return rows


def recall(ranked: list[str], evidence: list[str], k: int = 10) -> float:
    return len(set(ranked[:k]) & set(evidence)) / len(evidence)


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def paired_se(a: list[float], b: list[float]) -> float:
    d = [x - y for x, y in zip(a, b, strict=True)]
    m = mean(d)
    return math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1) / len(d))


def objective(scores: list[float], parts: list[list[int]]) -> float:
    """The mean of each part's mean: every set counts the same."""
    return mean(mean(scores[i] for i in part) for part in parts)


def objective_se(a: list[float], b: list[float], parts: list[list[int]]) -> float:
    """Standard error of objective(a) - objective(b), the parts being independent."""
    return math.sqrt(sum(paired_se([a[i] for i in part], [b[i] for i in part]) ** 2
                         for part in parts)) / len(parts)


def choose(scores: dict[int, list[float]], parts: list[list[int]], grid, rule: str,
           allowed: list[int] | None = None) -> int:
    """The grid position a rule picks from the questions in `parts` (one index list per
    set, each set counting the same; a single list is one set), among `allowed` positions
    (default all)."""
    if parts and isinstance(parts[0], int):
        parts = [parts]
    allowed = allowed or list(range(len(grid)))
    means = {s: objective(scores[s], parts) for s in allowed}
    best = min(means, key=lambda s: (-means[s], complexity(grid[s])))
    if rule == "best":
        return best
    within = [s for s in means
              if means[best] - means[s] <= objective_se(scores[best], scores[s], parts)]
    return min(within, key=lambda s: (complexity(grid[s]), -means[s]))


def guarded(scores: dict[int, list[float]], guard: list[int], floor: float) -> list[int]:
    """The settings whose mean over `guard` is at least `floor` (all when none is)."""
    kept = [s for s in scores if mean(scores[s][i] for i in guard) >= floor - 1e-12]
    return kept or list(scores)


def runbook_folds(rows: list[dict], index: list[int], folds: int = FOLDS,
                  runbooks: Path = RUNBOOKS) -> dict[int, int]:
    """A fold per runbooks question; questions whose evidence shares a record share one."""
    record_of = {fact["id"]: fact["episode"]
                 for fact in map(json.loads, (runbooks / "facts.jsonl").read_text().splitlines())}
    parent: dict[str, str] = {}

    def root(item: str) -> str:
        while parent.setdefault(item, item) != item:
            item = parent[item]
        return item

    for i in index:
        records = [record_of[e] for e in rows[i]["evidence"]]
        for other in records[1:]:
            parent[root(other)] = root(records[0])
    groups = sorted({root(record_of[rows[i]["evidence"][0]]) for i in index})
    fold_of_group = {group: n % folds for n, group in enumerate(groups)}
    return {i: fold_of_group[root(record_of[rows[i]["evidence"][0]])] for i in index}


def grid_scores(rows: list[dict], grid: list[dict]) -> dict[int, list[float]]:
    """recall@10 of every question under every setting, re-fused with the product's fuse;
    cached by what decides them."""
    from memories.search import hybrid as search

    fuse = search.fuse.inner if hasattr(search.fuse, "inner") else search.fuse
    fixed = {name: getattr(search, name) for name in FUSION_CONSTANTS if name not in GRID}
    key = hashlib.sha256(RECORDING.read_bytes() + inspect.getsource(search).encode()
                         + repr(fixed).encode()).hexdigest()
    cached = pickle.loads(SCORES.read_bytes()) if SCORES.exists() else {}
    known = cached.get("scores", {}) if cached.get("key") == key else {}
    missing = [s for s in grid if repr(sorted(s.items())) not in known]
    if missing:
        from tqdm import tqdm

        for setting in tqdm(missing, desc="settings", file=sys.stderr):
            known[repr(sorted(setting.items()))] = [
                recall(refuse(search, fuse, row["recorded"], setting), row["evidence"])
                for row in rows]
        SCORES.write_bytes(pickle.dumps({"key": key, "scores": known}))
    return {n: known[repr(sorted(s.items()))] for n, s in enumerate(grid)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="record again (needs a box)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--data", type=Path, default=None,
                        help="the LoCoMo conversations to record (at least five, one a fold; "
                             "default bench/locomo.py's dev set)")
    parser.add_argument("--runbooks", type=Path, default=RUNBOOKS,
                        help="the runbooks set to record (a folder as bench/data/runbooks; "
                             "default that one)")
    parser.add_argument("--vary", nargs="+", choices=list(GRID), default=list(GRID),
                        help="vary only these constants (the others stay as the product has "
                             "them); default all")
    args = parser.parse_args()

    if args.record or not RECORDING.exists():
        rows = record(args.data, args.runbooks)
        from memories.search import hybrid as search

        # The constants the tool ranked with, for the check below.
        recorded_with = {name: getattr(search, name) for name in FUSION_CONSTANTS}
        CACHE.mkdir(exist_ok=True)
        RECORDING.write_bytes(pickle.dumps({"rows": rows, "constants": recorded_with}))
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
        import django

        django.setup()
        recording = pickle.loads(RECORDING.read_bytes())
        if not isinstance(recording, dict):
            sys.exit(f"{RECORDING} was recorded by an older version of this bench: run it "
                     "with --record")
        rows, recorded_with = recording["rows"], recording["constants"]
    from memories.search import hybrid as search

    current = {name: getattr(search, name) for name in GRID}
    grid = [setting for setting in settings()
            if all(setting[name] == current[name] for name in GRID if name not in args.vary)]
    if current not in grid:
        grid.append(current)
    scores = grid_scores(rows, grid)
    sets = {"locomo": [i for i, row in enumerate(rows) if row["set"] == "locomo"],
            "runbooks": [i for i, row in enumerate(rows) if row["set"] == "runbooks"]}
    parts = list(sets.values())
    conversations = sorted({rows[i]["group"] for i in sets["locomo"]})
    fold = {i: conversations.index(rows[i]["group"]) for i in sets["locomo"]}
    fold |= runbook_folds(rows, sets["runbooks"], runbooks=args.runbooks)
    at_current = grid.index(current)
    replay = mean(recall(rows[i]["hybrid"], rows[i]["evidence"]) for i in sets["locomo"])
    fuse = search.fuse.inner if hasattr(search.fuse, "inner") else search.fuse
    again = mean(recall(refuse(search, fuse, rows[i]["recorded"], recorded_with),
                        rows[i]["evidence"]) for i in sets["locomo"])
    print(f"\nrecorded: {len(sets['locomo'])} LoCoMo questions in {len(conversations)} "
          f"conversations, {len(sets['runbooks'])} runbooks questions; {len(grid)} settings")
    print(f"check: the recording's own setting re-fused {again:.3f} = the tool's own hybrid "
          f"{replay:.3f} (LoCoMo recall@10)")

    def on(s: int, name: str, index=None) -> float:
        return mean(scores[s][i] for i in (index if index is not None else sets[name]))

    figures: dict = {"single": {}, "grid": {}}
    for name, index in sets.items():
        figures["single"][name] = {
            kind: mean(recall([c.fact_id for c in getattr(rows[i]["recorded"], kind)],
                              rows[i]["evidence"]) for i in index)
            for kind in ("text", "vector")}
    vector = [recall([c.fact_id for c in row["recorded"].vector], row["evidence"])
              for row in rows]
    # "guarded" decides: LoCoMo recall@10, among the settings whose hybrid is at least
    # vector alone on the runbooks questions chosen on (recall must not fall on
    # non-dialogue data). "both" is the plain alternative: the mean of the two sets.
    for goal, rule in itertools.product(("guarded", "both"), ("simplest", "best")):
        def pick(train: list[list[int]], goal: str = goal, rule: str = rule) -> int:
            if goal == "both":
                return choose(scores, train, grid, rule)
            allowed = guarded(scores, train[1], mean(vector[i] for i in train[1]))
            return choose(scores, [train[0]], grid, rule, allowed)

        print(f"\nfive folds over both sets, objective `{goal}`, rule `{rule}` (recall@10, "
              "LoCoMo / runbooks; in-sample = on the four folds chosen on):")
        print(f"{'fold':<5} {'LoCoMo held out':<16} {'n':>4} {'runbooks n':>10}  "
              f"{'chosen on the other four':<38} {'in-sample':>15} {'held-out':>15}")
        held: dict[int, float] = {}
        for k in range(FOLDS):
            train = [[i for i in part if fold[i] != k] for part in parts]
            test = [[i for i in part if fold[i] == k] for part in parts]
            s = pick(train)
            for part in test:
                for i in part:
                    held[i] = scores[s][i]
            print(f"{k:<5} {conversations[k]:<16} {len(test[0]):>4} {len(test[1]):>10}  "
                  f"{label(grid[s]):<38} {on(s, '', train[0]):>7.3f} / {on(s, '', train[1]):.3f}"
                  f" {mean(held[i] for i in test[0]):>7.3f} / "
                  f"{mean(held[i] for i in test[1]):.3f}")
        final = pick(parts)
        name = f"{goal}/{rule}"
        figures[name] = {"final": label(grid[final])}
        for set_name, index in sets.items():
            figures[name][set_name] = {"in_sample": on(final, set_name),
                                       "held_out": mean(held[i] for i in index)}
        print(f"chosen on all five folds: {label(grid[final])}")
        for set_name in sets:
            single = figures["single"][set_name]
            print(f"  {set_name:<9} text {single['text']:.3f}  vector {single['vector']:.3f}  "
                  f"hybrid: current {on(at_current, set_name):.3f}, chosen in-sample "
                  f"{figures[name][set_name]['in_sample']:.3f}, held-out "
                  f"{figures[name][set_name]['held_out']:.3f}")

    print("\nleading settings by the objective (mean of the two sets' recall@10, all folds):")
    order = sorted(range(len(grid)), key=lambda s: -objective(scores[s], parts))
    for n, s in enumerate(order):
        gap = objective(scores[order[0]], parts) - objective(scores[s], parts)
        se = objective_se(scores[order[0]], scores[s], parts) if n else 0.0
        per = [on(s, "", [i for i in sets["locomo"] if fold[i] == k]) for k in range(FOLDS)]
        figures["grid"][label(grid[s])] = {
            "locomo": on(s, "locomo"), "runbooks": on(s, "runbooks"), "gap_to_best": gap,
            "gap_se": se, "per_conversation": dict(zip(conversations, per, strict=True))}
        if n < 15 or s == at_current:
            print(f"  {label(grid[s]):<38} LoCoMo {on(s, 'locomo'):.3f} (conversations "
                  f"{min(per):.3f}-{max(per):.3f})  runbooks {on(s, 'runbooks'):.3f}  "
                  f"-{gap:.3f} +/- {se:.3f}{'  <- current' if s == at_current else ''}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
