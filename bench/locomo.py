"""LoCoMo retrieval benchmark, exactly the protocol of ../shared/data/locomo/README.md.

    .venv/bin/python bench/locomo.py [--data PATH] [--limit-conversations N]

For each conversation: a fresh memory; one write_episode per session (speakers as
`person` entities, one fact per turn keyed by its dia_id); then every question of
categories 1-4 through query_memory (top_k 10). It prints recall@1/5/10 and MRR
per category and overall for three retrievers side by side, from one run: full
text only, vector only, and the product's hybrid ranking.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.setup import bench_principal, fresh_instance, use_cached_embedder

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo_dev.json"
KS = (1, 5, 10)
RETRIEVERS = ("text", "vector", "hybrid")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def session_date(raw: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '8 May, 2023'."""
    return raw.split(" on ", 1)[1] if " on " in raw else raw


def load_conversation(principal, account, sample: dict, memory_name: str) -> dict[str, str]:
    """Write every session as one episode; returns fact_id -> dia_id."""
    from memories.schemas import WriteEpisodeArgs, parse
    from memories.services import memory_create, write_episode

    memory_create(account_id=account.pk, name=memory_name)
    conversation = sample["conversation"]
    speakers = [conversation["speaker_a"], conversation["speaker_b"]]
    entities = [{"name": name, "type": "person"} for name in speakers]
    dia_by_fact: dict[str, str] = {}
    sessions = sorted(int(k.split("_")[1]) for k in conversation
                       if re.fullmatch(r"session_\d+", k))
    for number, session in enumerate(sessions):
        date = session_date(conversation[f"session_{session}_date_time"])
        facts = []
        for turn in conversation[f"session_{session}"]:
            text = f"{turn['speaker']} on {date}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            other = speakers[1] if turn["speaker"] == speakers[0] else speakers[0]
            facts.append({"source": turn["speaker"], "target": other,
                          "relation_type": f"said {turn['dia_id']}", "fact": text,
                          "confidence": "extracted"})
        reply = write_episode(principal, parse(WriteEpisodeArgs, {
            "scope": "shared", "memory": memory_name, "assume_new": number == 0,
            "session_id": f"{sample['sample_id']}/session_{session}",
            "entities": entities, "facts": facts,
        }))
        assert reply["stored"], reply
        for edge in reply["edges_created"]:
            dia_by_fact[edge["fact_id"]] = edge["relation_type"].removeprefix("said ")
    return dia_by_fact


def evidence_of(question: dict, known: set[str]) -> list[str]:
    ids = []
    for item in question.get("evidence", []):
        ids += [part.strip() for part in str(item).split(";") if part.strip()]
    return [i for i in dict.fromkeys(ids) if i in known]


def retrieve(principal, memory_name: str, question: str) -> dict[str, list[str]]:
    """Top-10 fact ids of each retriever for one question."""
    from memories import search
    from memories.schemas import QueryMemoryArgs, parse
    from memories.scopes import partition_for
    from memories.selectors import _query_vector, memory_for, query_memory

    memory = memory_for(principal, memory_name)
    partition = partition_for(principal, "shared")
    window = search.Window()
    pool = 50
    text = search.text_candidates(memory.pk, partition, question, pool, window)
    vector = search.vector_candidates(memory.pk, partition, _query_vector(question), pool,
                                      window)
    hybrid = query_memory(principal, parse(QueryMemoryArgs, {
        "scope": "shared", "memory": memory_name, "query": question, "top_k": 10}))
    return {
        "text": [str(c.fact_id) for c in text[:10]],
        "vector": [str(c.fact_id) for c in vector[:10]],
        "hybrid": [f["fact_id"] for f in hybrid["facts"]],
    }


def score(ranked: list[str], evidence: list[str]) -> dict[str, float]:
    out = {f"r@{k}": len(set(ranked[:k]) & set(evidence)) / len(evidence) for k in KS}
    first = next((i for i, item in enumerate(ranked, start=1) if item in evidence), None)
    out["mrr"] = 1 / first if first else 0.0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="override a ranking constant for an experiment, e.g. "
                             "search.RRF_K=60 (modules under memories/) or "
                             "settings.ECHO_MEMORY_EMBED_CONTEXT=0")
    args = parser.parse_args()

    fresh_instance(indexing="manual")
    cached = use_cached_embedder(queries_too=True)
    apply_overrides(args.set)
    from tqdm import tqdm

    from memories.indexing import index_pending

    samples = json.loads(args.data.read_text())[: args.limit_conversations]
    principal, account = bench_principal()
    totals: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    started = time.perf_counter()
    turns = questions = 0
    skipped = 0
    for sample in tqdm(samples, desc="conversations", file=sys.stderr):
        memory_name = re.sub(r"[^a-z0-9_-]", "-", sample["sample_id"].lower())
        dia_by_fact = load_conversation(principal, account, sample, memory_name)
        index_pending()
        cached.save()
        turns += len(dia_by_fact)
        known = set(dia_by_fact.values())
        for question in sample["qa"]:
            category = question.get("category")
            if category not in CATEGORIES:
                continue
            evidence = evidence_of(question, known)
            if not evidence:
                skipped += 1
                continue
            questions += 1
            results = retrieve(principal, memory_name, question["question"])
            for retriever, fact_ids in results.items():
                ranked = [dia_by_fact.get(f, "") for f in fact_ids]
                figures = score(ranked, evidence)
                totals[(retriever, CATEGORIES[category])].append(figures)
                totals[(retriever, "overall")].append(figures)
    elapsed = time.perf_counter() - started
    report(totals, samples, turns, questions, skipped, elapsed, args.json)


def apply_overrides(assignments: list[str]) -> None:
    import importlib

    for assignment in assignments:
        target, _, raw = assignment.partition("=")
        module_name, _, name = target.rpartition(".")
        if module_name == "settings":
            from django.conf import settings

            setattr(settings, name, type(getattr(settings, name))(raw))
            print(f"override: settings.{name} = {raw}", file=sys.stderr)
            continue
        module = importlib.import_module(f"memories.{module_name}")
        current = getattr(module, name)
        setattr(module, name, type(current)(raw))
        print(f"override: memories.{target} = {getattr(module, name)!r}", file=sys.stderr)


def report(totals, samples, turns, questions, skipped, elapsed, json_path) -> None:
    groups = [*CATEGORIES.values(), "overall"]
    print(f"\nLoCoMo retrieval: {len(samples)} conversations, {turns} turns, "
          f"{questions} questions (categories 1-4; {skipped} without usable evidence "
          f"skipped), {elapsed:.0f}s\n")
    header = f"{'group':<12} {'n':>4}  " + "  ".join(
        f"{r + ' ' + m:>14}" for m in ("r@1", "r@5", "r@10", "mrr") for r in RETRIEVERS)
    print(header)
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for group in groups:
        cells = []
        for metric in ("r@1", "r@5", "r@10", "mrr"):
            for retriever in RETRIEVERS:
                rows = totals[(retriever, group)]
                value = sum(r[metric] for r in rows) / len(rows) if rows else 0.0
                figures.setdefault(group, {}).setdefault(retriever, {})[metric] = value
                cells.append(f"{value:>14.3f}")
        print(f"{group:<12} {len(totals[('hybrid', group)]):>4}  " + "  ".join(cells))
    overall = figures["overall"]
    print("\noverall recall@10: " + ", ".join(
        f"{r} {overall[r]['r@10']:.3f}" for r in RETRIEVERS))
    if json_path:
        json_path.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
