"""Note search quality (issue 12): recall@k and MRR of memory_search, per retriever.

    .venv/bin/python bench/notes_quality.py [--data DIR] [--json PATH] [--set MODULE.NAME=V]

The protocol, on a fresh box (the same embedded server and cached embedder as
bench/locomo.py):

1. One memory; every note of bench/data/notes/notes.jsonl saved through the
   `memory_save` tool (scope shared, the note's own project), then indexed.
2. Every question of questions.jsonl through the `memory_search` tool, limit 10,
   without a project (so the distractor project's notes compete).
3. Three rankings from that one call. hybrid: the tool's results. text only and
   vector only: the two candidate lists memory_search hands to
   `memories.notes.ranking.fuse_notes`, each in its own order (the bench wraps it to
   read them, with the near-word matches it also hands over; nothing in the product
   changes). These are the same lists the product fuses, so the comparison is of the
   fusion, not of two different searches.
4. recall@k = share of the question's evidence notes in the top k, averaged over
   questions, k = 1, 5, 10, plus MRR of the first evidence hit; per question kind
   (exact / keyword / paraphrase) and overall. Issue 12 asks hybrid > text and
   hybrid > vector at recall@5 overall.
5. With --cv, the fusion's constants are chosen by grouped cross-validation over
   the same candidate lists (bench/notes_fusion.py), and held-out figures are printed
   beside in-sample ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.locomo import apply_overrides, score
from bench.notes_dataset import DATA, load, problems
from bench.notes_fusion import Question, cross_validate, print_report
from bench.runbooks_quality import table as per_kind_table
from bench.setup import bench_principal, fresh_instance, use_cached_embedder

MEMORY = "notes-bench"
RETRIEVERS = ("text", "vector", "hybrid")
METRICS = ("r@1", "r@5", "r@10", "mrr")
KINDS = ("exact", "keyword", "paraphrase")
DEPTH = 10


class FuseTap:
    """Wraps memories.notes.ranking.fuse_notes to keep the candidate lists each search fuses."""

    def __init__(self, ranking_module) -> None:
        self.inner = ranking_module.fuse_notes
        self.calls: list[tuple[list, list, list]] = []

    def __call__(self, *args, **kwargs):
        vector = kwargs["vector"] if "vector" in kwargs else args[0]
        text = kwargs["text"] if "text" in kwargs else args[1]
        words = kwargs.get("words", args[3] if len(args) > 3 else [])
        self.calls.append((list(vector), list(text), list(words)))
        return self.inner(*args, **kwargs)


def tool(name: str):
    from tools.registry import TOOLS

    if name not in TOOLS:
        sys.exit(f"the server has no `{name}` tool yet (issue 12 adds the note tools); "
                 "this bench runs once they are on main")
    return TOOLS[name]


def save_notes(principal, notes: list[dict]) -> dict[str, str]:
    """Save every note through memory_save; returns server id -> the set's note id."""
    from tools.calling import call_tool

    save = tool("memory_save")
    set_id_of: dict[str, str] = {}
    for note in notes:
        arguments = {k: v for k, v in note.items() if k != "id" and v is not None}
        reply = call_tool(principal, save, {**arguments, "memory": MEMORY, "scope": "shared"})
        set_id_of[str(reply["id"])] = note["id"]
    if len(set_id_of) != len(notes):
        sys.exit(f"{len(notes)} saves made {len(set_id_of)} notes: a save updated another "
                 "note instead of adding one")
    return set_id_of


def check_indexed(count: int) -> None:
    from memories.models import Note

    embedded = Note.objects.filter(embedding__isnull=False).count()
    if embedded != count:
        sys.exit(f"only {embedded} of {count} notes have an embedding after index_pending(); "
                 "the vector figures would be meaningless")


def rankings(principal, tap: FuseTap, question: str) -> dict[str, list[str]]:
    """Server note ids, best first, of each retriever for one memory_search call."""
    from tools.calling import call_tool

    tap.calls.clear()
    reply = call_tool(principal, tool("memory_search"),
                      {"query": question, "limit": DEPTH, "memory": MEMORY})
    if len(tap.calls) != 1:
        sys.exit(f"memory_search called fuse_notes {len(tap.calls)} times for one "
                 "query (expected once, through the module attribute); the bench reads the "
                 "text-only and vector-only lists there. See the module docstring.")
    vector, text, _ = tap.calls[0]
    return {
        "text": [str(c.fact_id) for c in text[:DEPTH]],
        "vector": [str(c.fact_id) for c in vector[:DEPTH]],
        "hybrid": [str(r["id"]) for r in reply["results"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="override a ranking constant for an experiment, e.g. "
                             "search.RRF_K=60 (modules under memories/)")
    parser.add_argument("--dump", type=Path, help="write each question's candidate lists "
                        "(set ids and scores) here, for re-fusing offline")
    parser.add_argument("--cv", action="store_true",
                        help="choose the fusion constants by grouped cross-validation and "
                             "print held-out beside in-sample figures")
    parser.add_argument("--show-misses", action="store_true",
                        help="list the questions hybrid misses at 5")
    args = parser.parse_args()

    notes, questions = load(args.data)
    wrong = problems(notes, questions)
    if wrong:
        sys.exit("the dataset has problems:\n" + "\n".join(wrong))

    fresh_instance(indexing="manual")
    cached = use_cached_embedder(queries_too=True)
    apply_overrides(args.set)
    from memories.graph.services import memory_create
    from memories.notes import ranking as note_ranking
    from memories.search.indexing import index_pending

    principal, account = bench_principal()
    memory_create(account_id=account.pk, name=MEMORY)
    started = time.perf_counter()
    set_id_of = save_notes(principal, notes)
    index_pending()
    cached.save()
    check_indexed(len(notes))
    loaded = time.perf_counter() - started

    tap = FuseTap(note_ranking)
    note_ranking.fuse_notes = tap
    totals: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    misses: list[str] = []
    dumped: list[dict] = []
    tapped: list[Question] = []
    started = time.perf_counter()
    for question in questions:
        ranked_by = rankings(principal, tap, question["question"])
        vector, text, words = tap.calls[0]
        tapped.append(Question(question["id"], question["kind"],
                               tuple(question["evidence"]), vector, text, words))
        dumped.append({**question, **{
            name: [[set_id_of.get(str(c.fact_id), ""), c.score, c.coverage]
                   for c in candidates]
            for name, candidates in (("vector", vector), ("text", text))},
            "words": [[set_id_of.get(str(m.note_id), ""), m.nearest] for m in words]})
        for retriever, ids in ranked_by.items():
            ranked = [set_id_of.get(i, "") for i in ids]
            figures = score(ranked, question["evidence"])
            totals[(retriever, question["kind"])].append(figures)
            totals[(retriever, "overall")].append(figures)
            if retriever == "hybrid" and figures["r@5"] < 1:
                misses.append(f"{question['id']} {question['kind']:<10} "
                              f"{question['question']!r} -> {ranked[:5]}")
    cached.save()
    asked = time.perf_counter() - started
    figures = report(totals, notes, questions, loaded, asked)
    if args.cv:
        result = cross_validate(tapped, tap.inner, DEPTH, score,
                                lambda hit: set_id_of.get(str(hit.fact_id), ""))
        print_report(result)
        figures["cross_validation"] = {
            "chosen": vars(result["chosen"]),
            "per_fold": [vars(s) for _, _, s in result["per_fold"]],
            **{k: result[k] for k in ("held_out", "in_sample", "vector_alone", "ablations")}}
    if args.show_misses:
        print("\nhybrid misses at 5 (evidence not all in the top 5):")
        print("\n".join(misses) or "none")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    if args.dump:
        args.dump.write_text(json.dumps(dumped))


def report(totals, notes, questions, loaded: float, asked: float) -> dict:
    projects = sorted({n["project"] for n in notes})
    print(f"\nNote search quality: {len(notes)} notes ({', '.join(projects)}), "
          f"{len(questions)} questions; saved and indexed in {loaded:.0f}s, "
          f"asked in {asked:.1f}s\n")
    figures = per_kind_table(totals)
    overall = figures["overall"]
    at5 = {r: overall[r]["r@5"] for r in RETRIEVERS}
    beats = at5["hybrid"] > at5["text"] and at5["hybrid"] > at5["vector"]
    print("\noverall recall@5: " + ", ".join(f"{r} {v:.3f}" for r, v in at5.items())
          + f"; hybrid beats both: {'yes' if beats else 'NO'}")
    return figures


if __name__ == "__main__":
    main()
