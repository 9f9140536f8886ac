"""Operations-record retrieval quality (issue 13): recall@k and MRR of query_memory, per retriever.

    .venv/bin/python bench/runbooks_quality.py [--data DIR] [--json PATH] [--set MODULE.NAME=V]
                                               [--first-pass-only]

The protocol, on a fresh box (the same embedded server and cached embedder as
bench/locomo.py):

1. One memory; every record of bench/data/runbooks/episodes.jsonl written through the
   `write_episode` tool (scope shared, session_id = the record id, its entities and
   facts as the set has them), then indexed. A name the server calls ambiguous (a
   similar name already in the graph) is answered "new", as the set's names are
   distinct things. (--first-pass-only: not indexed, and the query's own embedding off,
   so every fact is searched by its first-pass vector.)
2. Every question of questions.jsonl through the `query_memory` tool, top_k 10.
3. Three rankings from that one call. hybrid: the tool's facts. text only and vector
   only: the two candidate lists query_memory hands to `memories.search.hybrid.fuse`, each in
   its own order (bench/fusion.py's tap reads them; nothing in the product changes).
4. recall@k = share of the question's evidence facts in the top k, averaged over
   questions, k = 1, 5, 10, plus MRR of the first evidence hit; per question kind
   (exact / keyword / paraphrase; a set labelled otherwise, as bench/data/pyfaq by FAQ
   page, by its own kinds) and overall.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.fusion import FusionTap, Recorded
from bench.locomo import apply_overrides, score
from bench.runbooks_dataset import DATA, load, problems
from bench.setup import bench_principal, fresh_instance, use_cached_embedder

MEMORY = "tallyline-ops"
RETRIEVERS = ("text", "vector", "hybrid")
METRICS = ("r@1", "r@5", "r@10", "mrr")
KINDS = ("exact", "keyword", "paraphrase")
DEPTH = 10


def episode_arguments(episode: dict, facts: list[dict], memory: str) -> dict:
    """write_episode's arguments for one record of the set."""
    keep = ("source", "target", "relation_type", "fact", "confidence")
    return {
        "scope": "shared", "memory": memory, "session_id": episode["id"],
        "entities": episode["entities"],
        "facts": [{k: f[k] for k in keep} for f in facts if f["episode"] == episode["id"]],
    }


def write_set(principal, episodes: list[dict], facts: list[dict], memory: str) -> dict[str, str]:
    """Write every record through write_episode; returns server fact id -> the set's id."""
    from tools.calling import call_tool
    from tools.registry import TOOLS

    set_id_of: dict[str, str] = {}
    for episode in episodes:
        arguments = episode_arguments(episode, facts, memory)
        reply = call_tool(principal, TOOLS["write_episode"], arguments)
        if reply.get("ambiguous_entities"):
            arguments["entity_resolutions"] = {
                a["name"]: "new" for a in reply["ambiguous_entities"]}
            reply = call_tool(principal, TOOLS["write_episode"], arguments)
        if not reply.get("stored"):
            sys.exit(f"{episode['id']} was not stored: {reply.get('message')}")
        ids = [f["id"] for f in facts if f["episode"] == episode["id"]]
        created = reply["edges_created"]
        if len(created) != len(ids):
            sys.exit(f"{episode['id']}: {len(ids)} facts made {len(created)} edges")
        for set_id, edge in zip(ids, created, strict=True):
            set_id_of[edge["fact_id"]] = set_id
    return set_id_of


def load_into(principal, account, folder: Path = DATA, memory: str = MEMORY, *,
              index: bool = True, check=problems):
    """The set written, indexed (unless `index` is false): (set_id_of, questions). Into
    `memory`, or, for a set whose episodes name theirs (bench/mixed_dataset.py), into each
    episode's memory. `check` lists what is wrong with the set (runbooks' rules by default)."""
    from memories.graph.services import memory_create
    from memories.models import Fact
    from memories.search.indexing import index_pending

    episodes, facts, questions = load(folder)
    wrong = check(episodes, facts, questions)
    if wrong:
        sys.exit("the dataset has problems:\n" + "\n".join(wrong))
    by_memory: dict[str, list[dict]] = {}
    for episode in episodes:
        by_memory.setdefault(episode.get("memory", memory), []).append(episode)
    set_id_of: dict[str, str] = {}
    for name, written in by_memory.items():
        memory_create(account_id=account.pk, name=name)
        set_id_of |= write_set(principal, written, facts, name)
    if not index:
        return set_id_of, questions
    index_pending()
    embedded = Fact.objects.filter(memory__name__in=list(by_memory),
                                   embedding__isnull=False).count()
    if embedded != len(facts):
        sys.exit(f"only {embedded} of {len(facts)} facts have a vector after index_pending()")
    return set_id_of, questions


def ask(principal, tap: FusionTap, memory: str, question: str) -> tuple[list[str], Recorded]:
    """The tool's ranked fact ids and what it handed to fuse, for one query_memory call."""
    from tools.calling import call_tool
    from tools.registry import TOOLS

    tap.calls.clear()
    reply = call_tool(principal, TOOLS["query_memory"],
                      {"scope": "shared", "memory": memory, "query": question, "top_k": DEPTH})
    return [f["fact_id"] for f in reply["facts"]], tap.take_one()


def rankings(hybrid: list[str], recorded: Recorded) -> dict[str, list[str]]:
    return {"text": [str(c.fact_id) for c in recorded.text[:DEPTH]],
            "vector": [str(c.fact_id) for c in recorded.vector[:DEPTH]],
            "hybrid": hybrid}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="override a ranking constant for an experiment, e.g. "
                             "search.RRF_K=60 (modules under memories/)")
    parser.add_argument("--first-pass-only", action="store_true",
                        help="ask with nothing indexed and the query's own embedding off: "
                             "every fact on its first-pass vector")
    args = parser.parse_args()

    fresh_instance(indexing="manual")
    cached = use_cached_embedder(queries_too=True)
    apply_overrides(args.set)
    from memories.search import hybrid as search

    principal, account = bench_principal()
    started = time.perf_counter()
    if args.first_pass_only:
        from django.conf import settings

        settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
    set_id_of, questions = load_into(principal, account, args.data,
                                     index=not args.first_pass_only)
    cached.save()
    loaded = time.perf_counter() - started

    tap = FusionTap(search).install()
    totals: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    started = time.perf_counter()
    for question in questions:
        hybrid, recorded = ask(principal, tap, MEMORY, question["question"])
        for retriever, ids in rankings(hybrid, recorded).items():
            figures = score([set_id_of.get(i, "") for i in ids], question["evidence"])
            totals[(retriever, question["kind"])].append(figures)
            totals[(retriever, "overall")].append(figures)
    cached.save()
    asked = time.perf_counter() - started
    print(f"\nOperations records: {len(set_id_of)} facts, {len(questions)} questions; "
          f"written and indexed in {loaded:.0f}s, asked in {asked:.1f}s\n")
    # The set's own kinds: runbooks' lexical ones in their usual order, others (the FAQ's
    # pages) in the order the questions bring them.
    present = list(dict.fromkeys(q["kind"] for q in questions))
    figures = table(totals, sorted(present, key=lambda k: KINDS.index(k) if k in KINDS
                                   else len(KINDS)))
    overall = figures["overall"]
    print("\noverall recall@10: " + ", ".join(
        f"{r} {overall[r]['r@10']:.3f}" for r in RETRIEVERS))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def table(totals, kinds=KINDS) -> dict:
    """Prints recall@1/5/10 and MRR per question kind and retriever; returns them."""
    print(f"{'kind':<12} {'n':>4}  " + "  ".join(
        f"{r + ' ' + m:>13}" for m in METRICS for r in RETRIEVERS))
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for group in (*kinds, "overall"):
        cells = []
        for metric in METRICS:
            for retriever in RETRIEVERS:
                rows = totals[(retriever, group)]
                value = sum(r[metric] for r in rows) / len(rows) if rows else 0.0
                figures.setdefault(group, {}).setdefault(retriever, {})[metric] = value
                cells.append(f"{value:>13.3f}")
        print(f"{group:<12} {len(totals[('hybrid', group)]):>4}  " + "  ".join(cells))
    return figures


if __name__ == "__main__":
    main()
