"""Cross-validated choice of the fusion constants (issue 13, "Generalization").

    .venv/bin/python bench/ranking_cv.py [--record] [--json PATH]

1. Record (once; cached in bench/.cache/ranking_cv.pickle, `--record` redoes it): on a
   fresh box, the LoCoMo dev conversations written and asked exactly as bench/locomo.py
   does, and the operations set as bench/runbooks_quality.py does; for every question,
   the two candidate lists and the named entities that query_memory hands to
   `memories.search.fuse` (bench/fusion.py's tap).
2. Re-fuse offline: every setting of a small grid over the constants fuse reads
   (RRF_K x TEXT_WEIGHT x ENTITY_WEIGHT; VECTOR_WEIGHT stays 1, since only the ratio
   of the two weights matters) is applied to the recorded lists with the product's own
   fuse, and scored with recall@10.
3. Leave one conversation out on LoCoMo: for each of the five conversations, the setting
   is chosen on the other four and scored on it. Two choosing rules: `best` (the highest
   recall@10 on the four) and `simplest` (the simplest setting whose recall@10 on the
   four is within one standard error of the best's, the error of the per-question paired
   difference; simpler = fewer departures from textbook reciprocal rank fusion: k = 60,
   equal weights, no entity bonus). The held-out figure of a rule is every question
   scored by the setting its fold chose without seeing that question's conversation;
   the in-sample figure is the chosen setting's recall on the conversations it was
   chosen on.
4. The operations set is never used to choose; it is reported for the current and the
   chosen settings, all three retrievers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import pickle
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.fusion import Recorded, refuse
from bench.setup import CACHE

RECORDING = CACHE / "ranking_cv.pickle"
GRID = {"RRF_K": (5, 10, 20, 60), "TEXT_WEIGHT": (0.5, 0.75, 1.0, 1.25),
        "ENTITY_WEIGHT": (0.0, 0.5, 1.0)}
TEXTBOOK = {"RRF_K": 60, "TEXT_WEIGHT": 1.0, "ENTITY_WEIGHT": 0.0}


def settings() -> list[dict[str, float]]:
    names = list(GRID)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*GRID.values())]


def complexity(setting: dict[str, float]) -> tuple[int, float]:
    """How far a setting is from textbook fusion: the constants it changes, then by how much
    (k and the text weight on a log scale, the entity bonus as is)."""
    changed = sum(1 for name, value in setting.items() if value != TEXTBOOK[name])
    distance = (abs(math.log(setting["RRF_K"] / TEXTBOOK["RRF_K"]))
                + abs(math.log(setting["TEXT_WEIGHT"])) + setting["ENTITY_WEIGHT"])
    return changed, round(distance, 6)


def label(setting: dict[str, float]) -> str:
    return (f"k={setting['RRF_K']:g} text={setting['TEXT_WEIGHT']:g} "
            f"entity={setting['ENTITY_WEIGHT']:g}")


def relabel(recorded: Recorded, labels: dict[str, str]) -> Recorded:
    """The same lists with the set's own ids as fact ids (stable across runs, picklable)."""
    def swap(candidates):
        return [c._replace(fact_id=labels.get(str(c.fact_id), "?")) for c in candidates]

    return Recorded(swap(recorded.vector), swap(recorded.text), recorded.mentioned,
                    recorded.top_k)


def record() -> list[dict]:
    from bench.fusion import FusionTap
    from bench.locomo import CATEGORIES, DEFAULT_DATA, evidence_of, load_conversation
    from bench.runbooks_quality import MEMORY, ask, load_into
    from bench.setup import bench_principal, fresh_instance, use_cached_embedder

    fresh_instance(indexing="manual")
    cached = use_cached_embedder(queries_too=True)
    from tqdm import tqdm

    from memories import search
    from memories.indexing import index_pending

    principal, account = bench_principal()
    tap = FusionTap(search).install()
    rows: list[dict] = []
    for sample in tqdm(json.loads(DEFAULT_DATA.read_text()), desc="conversations",
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
    set_id_of, questions = load_into(principal, account)
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


def choose(scores: dict[int, list[float]], index: list[int], grid, rule: str) -> int:
    """The grid position a rule picks from the questions at `index`."""
    means = {s: mean(scores[s][i] for i in index) for s in range(len(grid))}
    best = min(means, key=lambda s: (-means[s], complexity(grid[s])))
    if rule == "best":
        return best
    top = [scores[best][i] for i in index]
    within = [s for s in means
              if means[best] - means[s] <= paired_se(top, [scores[s][i] for i in index])]
    return min(within, key=lambda s: (complexity(grid[s]), -means[s]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="record again (needs a box)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    if args.record or not RECORDING.exists():
        rows = record()
        CACHE.mkdir(exist_ok=True)
        RECORDING.write_bytes(pickle.dumps(rows))
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
        import django

        django.setup()
        rows = pickle.loads(RECORDING.read_bytes())
    from memories import search

    fuse = search.fuse.inner if hasattr(search.fuse, "inner") else search.fuse
    current = {name: getattr(search, name) for name in GRID}
    grid = settings()
    if current not in grid:
        grid.append(current)
    ranked = {s: [refuse(search, fuse, row["recorded"], grid[s]) for row in rows]
              for s in range(len(grid))}
    scores = {s: [recall(r, row["evidence"]) for r, row in zip(ranked[s], rows, strict=True)]
              for s in ranked}
    locomo = [i for i, row in enumerate(rows) if row["set"] == "locomo"]
    ops = [i for i, row in enumerate(rows) if row["set"] == "runbooks"]
    groups = sorted({rows[i]["group"] for i in locomo})
    at_current = grid.index(current)
    replay = mean(recall(rows[i]["hybrid"], rows[i]["evidence"]) for i in locomo)
    print(f"\nrecorded: {len(locomo)} LoCoMo questions in {len(groups)} conversations, "
          f"{len(ops)} operations questions; {len(grid)} fusion settings")
    print(f"check: current setting re-fused {mean(scores[at_current][i] for i in locomo):.3f}"
          f" = the tool's own hybrid {replay:.3f} (LoCoMo recall@10)")

    figures: dict = {"grid": {label(g): {
        "locomo": mean(scores[s][i] for i in locomo), "runbooks": mean(scores[s][i] for i in ops),
        "per_conversation": {c: mean(scores[s][i] for i in locomo if rows[i]["group"] == c)
                             for c in groups}} for s, g in enumerate(grid)}}
    for rule in ("best", "simplest"):
        print(f"\nleave one conversation out, rule `{rule}`:")
        print(f"{'held out':<10} {'n':>4}  {'chosen on the other four':<30} "
              f"{'in-sample':>9} {'held-out':>9}")
        held, inside, weights = {}, [], []
        for conversation in groups:
            train = [i for i in locomo if rows[i]["group"] != conversation]
            test = [i for i in locomo if rows[i]["group"] == conversation]
            s = choose(scores, train, grid, rule)
            for i in test:
                held[i] = scores[s][i]
            inside.append(mean(scores[s][i] for i in train))
            weights.append(len(train))
            print(f"{conversation:<10} {len(test):>4}  {label(grid[s]):<30} "
                  f"{inside[-1]:>9.3f} {mean(held[i] for i in test):>9.3f}")
        in_sample = sum(w * x for w, x in zip(weights, inside, strict=True)) / sum(weights)
        held_out = mean(held.values())
        print(f"{'pooled':<10} {len(held):>4}  {'':<30} {in_sample:>9.3f} {held_out:>9.3f}")
        final = choose(scores, locomo, grid, rule)
        print(f"chosen on all five: {label(grid[final])}: LoCoMo "
              f"{mean(scores[final][i] for i in locomo):.3f}, operations set "
              f"{mean(scores[final][i] for i in ops):.3f}")
        figures[rule] = {"in_sample": in_sample, "held_out": held_out,
                         "final": label(grid[final])}

    print("\nsettings by LoCoMo recall@10 (all five conversations), with the operations set:")
    order = sorted(range(len(grid)), key=lambda s: -figures["grid"][label(grid[s])]["locomo"])
    best_scores = [scores[order[0]][i] for i in locomo]
    for s in order:
        entry = figures["grid"][label(grid[s])]
        gap = figures["grid"][label(grid[order[0]])]["locomo"] - entry["locomo"]
        se = paired_se(best_scores, [scores[s][i] for i in locomo]) if s != order[0] else 0.0
        entry["gap_to_best"], entry["gap_se"] = gap, se
        per = entry["per_conversation"]
        print(f"  {label(grid[s]):<30} LoCoMo {entry['locomo']:.3f} (-{gap:.3f} +/- {se:.3f}; "
              f"conversations {min(per.values()):.3f}-{max(per.values()):.3f})  "
              f"operations {entry['runbooks']:.3f}{'  <- current' if s == at_current else ''}")
    text = mean(recall([c.fact_id for c in rows[i]["recorded"].text], rows[i]["evidence"])
                for i in ops)
    vector = mean(recall([c.fact_id for c in rows[i]["recorded"].vector], rows[i]["evidence"])
                  for i in ops)
    print(f"\noperations set, single retrievers: text {text:.3f}, vector {vector:.3f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
