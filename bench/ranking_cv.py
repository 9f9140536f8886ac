"""Cross-validated choice of the fusion constants (issue 13, "Generalization"; issue 42).

    .venv/bin/python bench/ranking_cv.py [--record] [--sets NAME ...] [--vary NAME ...]
                                         [--processes N] [--json PATH] [--data LOCOMO.json]
                                         [--tried]
                                         [--runbooks DIR] [--pyfaq DIR] [--mixed DIR]

1. Record (bench/ranking_cv_recording.py; cached in bench/.cache/ranking_cv.pickle, or under
   $ECHO_BENCH_CACHE): on a fresh box, the LoCoMo dev conversations written and asked exactly
   as bench/locomo.py does, and each non-dialogue set (runbooks, pyfaq, mixed: COLLECTIONS
   there) as bench/runbooks_quality.py does, each in a memory of its own (mixed: 48 small
   memories, built first from the other sets' files, bench/mixed_dataset.py); for every
   question, the
   candidate lists and the named entities that query_memory hands to
   `memories.search.hybrid.fuse` (bench/fusion.py's tap). A set the recording lacks, or whose
   files changed, is recorded and added; `--record` records every set asked for again.
2. Re-fuse offline: every setting of a grid over the constants fuse reads (RRF_K x
   TEXT_WEIGHT x ENTITY_WEIGHT x TEXT_COVERAGE_FLOOR x NEIGHBOUR_WEIGHT; NEIGHBOUR_SPAN
   stays as the product has it, and VECTOR_WEIGHT 1, since only the ratio of the two
   weights matters) is applied to the recorded lists with the product's own fuse and
   scored with recall@10. The scores are cached next to the recording, per set, keyed by
   that set's recording, memories/search/hybrid.py's source and the constants outside the
   grid, so a second run re-fuses only what it has not scored (`--processes N` spreads that
   over N processes). `--vary NAME...` lets only those constants vary (the others stay as
   the product has them).
3. Five folds over every set at once: fold i holds out LoCoMo conversation i and one fifth
   of each non-dialogue set's questions (grouped by the episodes their evidence comes from,
   so no record or FAQ entry is chosen on and reported on; a mixed question is in the fold
   of the question it repeats, so none is chosen on in one set and scored in the other).
   The setting is chosen on the
   other four folds of every set and scored on the held-out fold, by one of two objectives:
   `guarded` (the highest LoCoMo recall@10 among the settings whose hybrid recall@10 on
   every non-dialogue set's questions chosen on is at least vector alone's there; every
   setting when none is) or `both` (the mean of the sets' recall@10, each set counting the
   same), and one of two rules: `best` (the highest objective) or `simplest` (the simplest
   setting within one standard error of the best, the error of the per-question paired
   difference; simpler = fewer departures from textbook reciprocal rank fusion: k = 60,
   equal weights, no entity or neighbour bonus, every word match voting). Held-out: every
   question scored by the setting its fold chose without seeing it. In-sample: the setting
   chosen on all five folds, scored on all of them. Text and vector alone involve no choice.
4. Per set, recall@10 per question kind (LoCoMo's categories, runbooks' exact / keyword /
   paraphrase, the FAQ's pages) and overall: text only, vector only, the shipped ranking
   (the product's constants now, re-fused on the recording), and the DECIDING objective and
   rule held out and in-sample. `--json` writes every figure printed, and the whole grid.
5. The learned order of the pool (bench/ranking_ltr.py) on the same folds: the product's
   form held out, nested (the form too chosen per fold, among ranking_ltr.FORMS, on the
   other four) and in-sample, in the per-kind table; every form's figures; the weights
   fitted on every question. `--tried` adds the forms tried since (ranking_ltr.TRIED).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import itertools
import json
import math
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import ranking_ltr
from bench.fusion import FUSION_CONSTANTS, refuse
from bench.locomo import CATEGORIES
from bench.ranking_cv_recording import COLLECTIONS, DEFAULT_SOURCES, DIALOGUE, recording
from bench.runbooks_quality import KINDS
from bench.setup import CACHE

SCORES = CACHE / "ranking_cv_scores.pickle"
# The grid is the first stage alone: reciprocal-rank fusion without the learned order of
# the pool (hybrid.LEARNED_RANKING), which bench/ranking_ltr.py fits and cross-validates
# on the same folds (the per-kind table's shipped, held-out and in-sample columns).
RRF_ONLY = {"LEARNED_RANKING": False}
# 720 settings: textbook k = 60 and the region the earlier, wider grids (1,344 settings,
# docs/benchmarks.md) chose in, widened where issue 42's choice sat on its edge (k below
# 5, the text weight above 1.25, the neighbour weight above 0.1).
GRID = {"RRF_K": (3, 5, 10, 60), "TEXT_WEIGHT": (0.75, 1.0, 1.25, 1.5),
        "ENTITY_WEIGHT": (0.0, 0.5, 1.0),
        "TEXT_COVERAGE_FLOOR": (0.0, 0.15, 0.2),
        "NEIGHBOUR_WEIGHT": (0.0, 0.05, 0.1, 0.2, 0.3)}
TEXTBOOK = {"RRF_K": 60, "TEXT_WEIGHT": 1.0, "ENTITY_WEIGHT": 0.0, "TEXT_COVERAGE_FLOOR": 0.0,
            "NEIGHBOUR_WEIGHT": 0.0}
FOLDS = 5
# The objective and rule whose held-out figures the per-kind report shows (issue 42's
# "held-out recall@10 per question kind").
DECIDING = ("guarded", "best")
KIND_ORDER = (*CATEGORIES.values(), *KINDS)


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


def recall(ranked: list[str], evidence: list[str], k: int = 10) -> float:
    return len(set(ranked[:k]) & set(evidence)) / len(evidence)


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def paired_se(a: list[float], b: list[float]) -> float:
    d = [x - y for x, y in zip(a, b, strict=True)]
    if len(d) < 2:  # a set too small to have an error (the test suite's tiny ones)
        return 0.0
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


def guards(train: dict[str, list[int]], vector: list[float]) -> list[tuple[list[int], float]]:
    """Per non-dialogue set, its questions in `train` and vector alone's recall@10 on them."""
    return [(index, mean(vector[i] for i in index))
            for name, index in train.items() if name != DIALOGUE]


def passing(scores: dict[int, list[float]], guards: list[tuple[list[int], float]]) -> list[int]:
    """The settings whose mean over each guard's questions is at least its floor."""
    return [s for s in scores
            if all(mean(scores[s][i] for i in index) >= floor - 1e-12 for index, floor in guards)]


def guarded(scores: dict[int, list[float]], guards: list[tuple[list[int], float]]) -> list[int]:
    """The settings that pass every guard; all of them when none does (the guard gives way
    rather than choosing nothing)."""
    return passing(scores, guards) or list(scores)


def pick(scores: dict[int, list[float]], grid, train: dict[str, list[int]],
         vector: list[float], goal: str, rule: str) -> int:
    """The setting an objective and rule choose from the questions of `train` (per set)."""
    if goal == "both":
        return choose(scores, list(train.values()), grid, rule)
    # LoCoMo recall, among the settings whose hybrid holds vector alone's recall on every
    # non-dialogue set (recall must not fall on non-dialogue data).
    return choose(scores, [train[DIALOGUE]], grid, rule, guarded(scores, guards(train, vector)))


def episode_folds(rows: list[dict], index: list[int], folder: Path,
                  folds: int = FOLDS) -> tuple[dict[int, int], dict[str, int]]:
    """A fold per question of a non-dialogue set (its files in `folder`); questions whose
    evidence shares an episode (a record, a FAQ entry) share one. Also the fold of each
    episode a question asks about."""
    episode_of = {fact["id"]: fact["episode"]
                  for fact in map(json.loads, (folder / "facts.jsonl").read_text().splitlines())}
    parent: dict[str, str] = {}

    def root(item: str) -> str:
        while parent.setdefault(item, item) != item:
            item = parent[item]
        return item

    for i in index:
        episodes = [episode_of[e] for e in rows[i]["evidence"]]
        for other in episodes[1:]:
            parent[root(other)] = root(episodes[0])
    groups = sorted({root(episode_of[rows[i]["evidence"][0]]) for i in index})
    fold_of_group = {group: n % folds for n, group in enumerate(groups)}
    return ({i: fold_of_group[root(episode_of[rows[i]["evidence"][0]])] for i in index},
            {episode: fold_of_group[root(episode)] for episode in list(parent)})


def origin_folds(rows: list[dict], index: list[int], conversations: list[str],
                 episodes: dict[str, dict[str, int]], folds: int = FOLDS) -> dict[int, int]:
    """A fold per question of a set made of other sets' questions (bench/mixed_dataset.py):
    the fold of the question it repeats, where that set is in the run (its conversation's
    for LoCoMo, its episode's for the others), so no question is chosen on in one set and
    scored in the other; otherwise one per memory (its group), memories dealt in turn."""
    memories = sorted({rows[i]["group"] for i in index})
    fold = {}
    for i in index:
        origin, group = rows[i]["origin"]
        if origin == DIALOGUE and group in conversations:
            fold[i] = conversations.index(group)
        elif group in episodes.get(origin, {}):
            fold[i] = episodes[origin][group]
        else:
            fold[i] = memories.index(rows[i]["group"]) % folds
    return fold


def fold_of(rows: list[dict], sets: dict[str, list[int]],
            sources: dict[str, Path]) -> tuple[dict[int, int], list[str]]:
    """Every question's fold (LoCoMo: its conversation's place), and the conversations."""
    conversations = sorted({rows[i]["group"] for i in sets[DIALOGUE]})
    if len(conversations) != FOLDS:
        sys.exit(f"the folds are LoCoMo's conversations: {FOLDS} needed, "
                 f"{len(conversations)} recorded")
    fold = {i: conversations.index(rows[i]["group"]) for i in sets[DIALOGUE]}
    episodes: dict[str, dict[str, int]] = {}
    derived = []
    for name, index in sets.items():
        if name == DIALOGUE:
            continue
        if any(rows[i].get("origin") for i in index):
            derived.append(name)
            continue
        own, episodes[name] = episode_folds(rows, index, sources[name])
        fold |= own
    for name in derived:
        fold |= origin_folds(rows, sets[name], conversations, episodes)
    return fold, conversations


# Set before a pool of worker processes forks, so they inherit it: (module, fuse, rows by set).
_WORK: tuple = ()


def _score(job: tuple[str, dict[str, float]]) -> list[float]:
    name, setting = job
    search, fuse, rows = _WORK
    return [recall(refuse(search, fuse, row["recorded"], setting | RRF_ONLY), row["evidence"])
            for row in rows[name]]


def grid_scores(rows: list[dict], grid: list[dict], tokens: dict[str, str],
                processes: int = 1) -> dict[int, list[float]]:
    """recall@10 of every question under every setting, re-fused with the product's fuse.
    Cached per set, by the set's recording (`tokens`: set -> its token), fuse's module and
    the constants outside the grid; only what the cache lacks is re-fused."""
    global _WORK
    from memories.search import hybrid as search

    fuse = search.fuse.inner if hasattr(search.fuse, "inner") else search.fuse
    fixed = {name: getattr(search, name) for name in FUSION_CONSTANTS
             if name not in GRID and name not in RRF_ONLY}
    code = hashlib.sha256(inspect.getsource(search).encode() + repr(fixed).encode()).hexdigest()
    cached = pickle.loads(SCORES.read_bytes()) if SCORES.exists() else {}
    known = cached.get("sets", {}) if cached.get("code") == code else {}
    index = {name: [i for i, row in enumerate(rows) if row["set"] == name] for name in tokens}

    def key(setting: dict[str, float]) -> str:
        return repr(sorted(setting.items()))

    jobs = [(name, setting) for name, token in tokens.items() for setting in grid
            if key(setting) not in known.get(token, {})]
    if jobs:
        from tqdm import tqdm

        _WORK = (search, fuse, {name: [rows[i] for i in index[name]] for name in tokens})
        if processes > 1:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(processes) as pool:
                done = list(tqdm(pool.imap(_score, jobs, chunksize=4), total=len(jobs),
                                 desc="settings x sets", file=sys.stderr))
        else:
            done = [_score(job) for job in tqdm(jobs, desc="settings x sets", file=sys.stderr)]
        for (name, setting), values in zip(jobs, done, strict=True):
            known.setdefault(tokens[name], {})[key(setting)] = values
        SCORES.write_bytes(pickle.dumps({"code": code, "sets": known}))
    scores = {}
    for n, setting in enumerate(grid):
        scores[n] = [0.0] * len(rows)
        for name, token in tokens.items():
            for i, value in zip(index[name], known[token][key(setting)], strict=True):
                scores[n][i] = value
    return scores


def cross_validate(scores, grid, sets: dict[str, list[int]], fold: dict[int, int],
                   vector: list[float], goal: str, rule: str) -> dict:
    """Each fold's choice made on the other four and every question scored by its fold's
    choice (held out); the choice made on all five (in-sample). `gave_way`: per fold, then
    on all five, whether the guard had to give way (no setting passed it)."""
    held: dict[int, float] = {}
    chosen, gave_way = [], []
    for k in [*range(FOLDS), None]:
        train = {name: [i for i in index if fold[i] != k] for name, index in sets.items()}
        s = pick(scores, grid, train, vector, goal, rule)
        chosen.append(s)
        gave_way.append(goal == "guarded" and not passing(scores, guards(train, vector)))
        held |= {i: scores[s][i] for index in sets.values() for i in index if fold[i] == k}
    return {"held": held, "chosen": chosen[:-1], "final": chosen[-1], "gave_way": gave_way}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true",
                        help="record the sets again (needs a box); without it, only sets the "
                             "recording lacks or whose files changed are recorded")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--sets", nargs="+", choices=[DIALOGUE, *COLLECTIONS],
                        default=[DIALOGUE, *COLLECTIONS],
                        help=f"the sets to cross-validate on (default all; {DIALOGUE} always, "
                             "the guarded objective maximizes it)")
    parser.add_argument("--data", type=Path, default=DEFAULT_SOURCES[DIALOGUE],
                        help="the LoCoMo conversations (five, one a fold; default "
                             "bench/locomo.py's dev set)")
    for name, collection in COLLECTIONS.items():
        parser.add_argument(f"--{name}", type=Path, default=collection.folder,
                            help=f"the {name} set's folder (default {collection.folder.name} "
                                 "under bench/data)")
    parser.add_argument("--vary", nargs="+", choices=list(GRID), default=list(GRID),
                        help="vary only these constants (the others stay as the product has "
                             "them); default all")
    parser.add_argument("--tried", action="store_true",
                        help="also cross-validate the learned order's forms tried after it "
                             "shipped (bench/ranking_ltr.py's TRIED; a few minutes more)")
    parser.add_argument("--processes", type=int, default=1,
                        help="re-fuse the grid in this many processes (default 1)")
    args = parser.parse_args()
    if DIALOGUE not in args.sets:
        parser.error(f"--sets must include {DIALOGUE}: its conversations are the folds")

    sources = {name: args.data if name == DIALOGUE else getattr(args, name)
               for name in (DIALOGUE, *COLLECTIONS) if name in args.sets}
    given = {DIALOGUE: args.data} | {name: getattr(args, name) for name in COLLECTIONS}
    for name, source in sources.items():
        built = name != DIALOGUE and COLLECTIONS[name].build
        if built and source == COLLECTIONS[name].folder:
            built(source, given)  # from the other sets' files asked for
    for name, source in sources.items():
        if not source.exists():
            parser.error(f"{name}: {source} does not exist")
    rows, about = recording(sources, again=args.record)
    from memories.search import hybrid as search

    current = {name: getattr(search, name) for name in GRID}
    grid = [setting for setting in settings()
            if all(setting[name] == current[name] for name in GRID if name not in args.vary)]
    if current not in grid:
        grid.append(current)
    shipped = grid.index(current)
    scores = grid_scores(rows, grid, {name: about[name]["token"] for name in sources},
                         args.processes)
    sets = {name: [i for i, row in enumerate(rows) if row["set"] == name] for name in sources}
    fold, conversations = fold_of(rows, sets, sources)
    single = {kind: [recall([c.fact_id for c in getattr(row["recorded"], kind)], row["evidence"])
                     for row in rows] for kind in ("text", "vector")}
    runs = {(goal, rule): cross_validate(scores, grid, sets, fold, single["vector"], goal, rule)
            for goal, rule in itertools.product(("guarded", "both"), ("simplest", "best"))}
    fuse = search.fuse.inner if hasattr(search.fuse, "inner") else search.fuse
    learned = ranking_ltr.cross_validate(rows, fold, FOLDS, tried=args.tried)
    learned["shipped"] = [recall(refuse(search, fuse, row["recorded"], {}), row["evidence"])
                          for row in rows]

    print(f"questions: {len(sets[DIALOGUE])} LoCoMo in {len(conversations)} conversations, "
          + ", ".join(f"{len(sets[name])} {name}" for name in sets if name != DIALOGUE)
          + f"; {len(grid)} settings")
    print("check, the recording's own constants re-fused against the tool's own hybrid "
          "(recall@10): " + ", ".join(
              f"{name} {a:.3f} = {b:.3f}" for name, (a, b) in
              replay(rows, sets, about, scores[shipped]).items()))
    figures = report(rows, grid, scores, sets, fold, conversations, single, runs, shipped,
                     learned)
    figures["sets"] = {name: {"questions": len(index), "path": str(sources[name]),
                              "recorded_with": about[name]["constants"]}
                       for name, index in sets.items()}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def replay(rows, sets, about, at_shipped: list[float]) -> dict[str, tuple[float, float]]:
    """Per set: its recording's own constants re-fused, and the tool's own hybrid (the same
    when the offline ranking is the product's)."""
    from memories.search import hybrid as search

    fuse = search.fuse.inner if hasattr(search.fuse, "inner") else search.fuse
    now = {name: getattr(search, name) for name in FUSION_CONSTANTS}
    out = {}
    for name, index in sets.items():
        # Recorded before the learned order: its constants rank by the first stage alone.
        constants = RRF_ONLY | about[name]["constants"]
        again = (at_shipped[i] if constants == now else
                 recall(refuse(search, fuse, rows[i]["recorded"], constants), rows[i]["evidence"])
                 for i in index)
        out[name] = (mean(again), mean(recall(rows[i]["hybrid"], rows[i]["evidence"])
                                       for i in index))
    return out


def report(rows, grid, scores, sets, fold, conversations, single, runs, shipped,
           learned) -> dict:
    """Prints the folds of every objective and rule, the leading settings and the per-kind
    tables; returns the figures."""
    names = list(sets)

    def on(s: int, index) -> float:
        return mean(scores[s][i] for i in index)

    def cells(values, width: int = 5) -> str:
        return " / ".join(f"{v:>{width}.3f}" for v in values)

    figures: dict = {"deciding": "/".join(DECIDING), "shipped": label(grid[shipped]),
                     "single": {name: {kind: mean(single[kind][i] for i in index)
                                       for kind in single} for name, index in sets.items()}}
    for (goal, rule), run in runs.items():
        held, name = run["held"], f"{goal}/{rule}"
        print(f"\nfive folds over {len(sets)} sets, objective `{goal}`, rule `{rule}` "
              f"(recall@10, {' / '.join(names)}; in-sample = on the four folds chosen on):")
        print(f"{'fold':<5} {'LoCoMo held out':<16} " + " ".join(f"{'n ' + n:>11}" for n in names)
              + f"  {'chosen on the other four':<50} {'in-sample':<{8 * len(names)}} held-out")
        figures[name] = {"folds": []}
        for k, s in enumerate(run["chosen"]):
            train = [[i for i in sets[n] if fold[i] != k] for n in names]
            test = [[i for i in sets[n] if fold[i] == k] for n in names]
            inside = [on(s, index) for index in train]
            outside = [mean(held[i] for i in index) for index in test]
            mark = " *" if run["gave_way"][k] else ""
            print(f"{k:<5} {conversations[k]:<16} " + " ".join(f"{len(t):>11}" for t in test)
                  + f"  {label(grid[s]) + mark:<50} {cells(inside)}  {cells(outside)}")
            figures[name]["folds"].append({
                "fold": k, "conversation": conversations[k], "chosen": label(grid[s]),
                "guard_gave_way": run["gave_way"][k],
                **{n: {"n": len(t), "in_sample": a, "held_out": b}
                   for n, t, a, b in zip(names, test, inside, outside, strict=True)}})
        final = run["final"]
        figures[name] |= {"final": label(grid[final]), "guard_gave_way": run["gave_way"][-1]}
        print(f"chosen on all five folds: {label(grid[final])}"
              + (" *" if run["gave_way"][-1] else ""))
        if any(run["gave_way"]):
            print("  * no setting held vector alone's recall@10 on every non-dialogue set: the "
                  "guard gave way (every setting allowed)")
        for n, index in sets.items():
            figures[name][n] = {"in_sample": on(final, index),
                                "held_out": mean(held[i] for i in index)}
            print(f"  {n:<9} text {figures['single'][n]['text']:.3f}  vector "
                  f"{figures['single'][n]['vector']:.3f}  hybrid: shipped "
                  f"{on(shipped, index):.3f}, chosen in-sample {figures[name][n]['in_sample']:.3f}"
                  f", held-out {figures[name][n]['held_out']:.3f}")
    figures["grid"] = leading(grid, scores, sets, fold, conversations, shipped)
    figures["kinds"] = per_kind(rows, grid, scores, sets, single, runs[DECIDING], shipped,
                                learned)
    return figures


def leading(grid, scores, sets, fold, conversations, shipped) -> dict:
    """The settings by the `both` objective over all folds: the first 15 and the shipped one
    printed, every one returned."""
    parts = list(sets.values())
    print(f"\nleading settings by the objective (mean of the {len(sets)} sets' recall@10, "
          "all folds):")
    order = sorted(range(len(grid)), key=lambda s: -objective(scores[s], parts))
    figures = {}
    for n, s in enumerate(order):
        gap = objective(scores[order[0]], parts) - objective(scores[s], parts)
        se = objective_se(scores[order[0]], scores[s], parts) if n else 0.0
        per = [mean(scores[s][i] for i in sets[DIALOGUE] if fold[i] == k) for k in range(FOLDS)]
        each = {name: mean(scores[s][i] for i in index) for name, index in sets.items()}
        figures[label(grid[s])] = {**each, "gap_to_best": gap, "gap_se": se,
                                   "per_conversation": dict(zip(conversations, per, strict=True))}
        if n < 15 or s == shipped:
            print(f"  {label(grid[s]):<50} "
                  + "  ".join(f"{name} {value:.3f}" for name, value in each.items())
                  + f"  (conversations {min(per):.3f}-{max(per):.3f})  -{gap:.3f} +/- "
                  f"{se:.3f}{'  <- shipped' if s == shipped else ''}")
    return figures


def per_kind(rows, grid, scores, sets, single, run, shipped, learned) -> dict:
    """recall@10 per question kind of every set: text and vector alone, the first stage
    (reciprocal-rank fusion, the product's constants, and the deciding objective and rule
    held out), the shipped ranking (the learned order, RANK_WEIGHTS as the product has
    them), and the learned order held out (fitted on the other four folds) and in-sample
    (fitted on all five)."""
    print(f"\nrecall@10 per question kind. rrf: reciprocal-rank fusion alone, the product's "
          f"constants ({label(grid[shipped])}); rrf-cv: `{'/'.join(DECIDING)}` held out; "
          "shipped: the learned order of the pool (hybrid.RANK_WEIGHTS); held-out and "
          "in-sample: its weights fitted on the other four folds / on all five; nested: the "
          "form too chosen on the other four folds (bench/ranking_ltr.py)")
    columns = {"text": lambda i: single["text"][i], "vector": lambda i: single["vector"][i],
               "rrf": lambda i: scores[shipped][i], "rrf_cv": lambda i: run["held"][i],
               "shipped": lambda i: learned["shipped"][i],
               "held_out": lambda i: learned["held"][i],
               "nested": lambda i: learned["nested"][i],
               "in_sample": lambda i: learned["in_sample"][i]}
    figures: dict = {}
    for name, index in sets.items():
        # Kinds in their usual order (LoCoMo's categories, runbooks' lexical kinds); others
        # (the FAQ's pages) in the order the questions bring them.
        kinds = sorted(dict.fromkeys(rows[i]["kind"] for i in index),
                       key=lambda k: KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER))
        print(f"\n{name:<12} {'n':>4} {'text-only':>10} {'vector-only':>12} {'rrf':>6} "
              f"{'rrf-cv':>7} {'shipped':>8} {'held-out':>9} {'nested':>7} {'in-sample':>10}")
        figures[name] = {}
        for kind in (*kinds, "overall"):
            group = [i for i in index if kind in ("overall", rows[i]["kind"])]
            figures[name][kind] = {"n": len(group)} | {
                column: mean(value(i) for i in group) for column, value in columns.items()}
            row = figures[name][kind]
            print(f"{kind:<12} {len(group):>4} {row['text']:>10.3f} {row['vector']:>12.3f} "
                  f"{row['rrf']:>6.3f} {row['rrf_cv']:>7.3f} {row['shipped']:>8.3f} "
                  f"{row['held_out']:>9.3f} {row['nested']:>7.3f} {row['in_sample']:>10.3f}")
        first = [scores[shipped][i] for i in index]
        for column in ("held", "nested"):
            values = [learned[column][i] for i in index]
            print(f"{'':<12} {'held-out' if column == 'held' else column} - rrf, paired: "
                  f"{mean(values) - mean(first):+.3f} +/- {paired_se(values, first):.3f}")
    figures["forms"] = compared_forms(sets, learned)
    from memories.search import hybrid

    n = len(hybrid.RANK_WEIGHTS)
    figures["weights"] = {name: (float(learned["final"][j]), float(learned["final"][j + n]))
                          for j, name in enumerate(hybrid.RANK_WEIGHTS)}
    print("\nthe learned order's weights fitted on every question (every query, added when "
          "it names an entity; hybrid.RANK_WEIGHTS holds them rounded):")
    for name, (alone, extra) in figures["weights"].items():
        print(f"    {name!r}: ({alone:+.3f}, {extra:+.3f}),")
    return figures

def compared_forms(sets, learned) -> dict:
    """Every form of ranking_ltr.FORMS (and TRIED, when run) held out and in-sample per set;
    the nested figures and choices; printed and returned."""
    names = list(sets)

    def on(values, index) -> float:
        return mean(values[i] for i in index)

    print("\nthe learned order's forms, recall@10 held out, then in-sample ("
          + " / ".join(names) + "; bench/ranking_ltr.py):")
    figures: dict = {"forms": {}}
    print(f"  {'rrf, no form':<44} "
          + " / ".join(f"{on(learned['rrf'], index):.3f}" for index in sets.values()))
    for form, run in learned["forms"].items():
        figures["forms"][form] = {
            name: {"held_out": on(run["held"], index), "in_sample": on(run["in_sample"], index)}
            for name, index in sets.items()}
        row = figures["forms"][form]
        print(f"  {form:<44} " + " / ".join(f"{row[n]['held_out']:.3f}" for n in names)
              + "   " + " / ".join(f"{row[n]['in_sample']:.3f}" for n in names))
    for key, run in (("forms", learned), ("with_tried", learned.get("tried"))):
        if run is None:
            continue
        nested = {name: on(run["nested"], index) for name, index in sets.items()}
        figures[f"nested_{key}"] = {"nested": nested, "chosen": run["chosen"],
                                    "chosen_on_all": run["chosen_on_all"]}
        among = "FORMS" if key == "forms" else "FORMS and TRIED"
        print(f"nested, the form chosen among {among} per fold on the other four (guarded "
              "against rrf): " + " / ".join(f"{nested[n]:.3f}" for n in names))
        print("  chosen per fold: " + "; ".join(f"{k} {form}"
                                                 for k, form in enumerate(run["chosen"]))
              + f"; on all five: {run['chosen_on_all']}")
    return figures


if __name__ == "__main__":
    main()
