"""LoCoMo retrieval benchmark, exactly the protocol of ../shared/data/locomo/README.md.

    .venv/bin/python bench/locomo.py [--data PATH] [--limit-conversations N]
                                     [--immediate | --first-pass-only]

For each conversation: a fresh memory; one write_episode per session (speakers as
`person` entities, one fact per turn keyed by its dia_id); then every question of
categories 1-4 through query_memory (top_k 10). It prints recall@1/5/10 and MRR
per category and overall for three retrievers side by side, from one run: full
text only, vector only, and the product's hybrid ranking.

--immediate asks each conversation's questions right after its episodes are written,
with no wait, as an agent would: the indexer runs in the background (`thread` mode, the
single box's default) and every vector is computed by the model, no cache. Then the same
conversations are written again into fresh memories and asked once the indexer has
caught up (the settled run), and both hybrid recall@10 figures are printed side by side.

--first-pass-only asks with nothing indexed and the query's own embedding off: every fact
on its first-pass vector (memories/search/first_pass.py), the state the seconds after a write
tend to, measured without the indexer's timing in it.
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


def sessions(sample: dict) -> list[tuple[int, list[dict]]]:
    """Each session in order, as (number, its facts as write_episode takes them): one per
    turn, "<speaker> on <session date>: <words>" plus the photo caption, said to the other
    speaker, keyed `said <dia_id>`."""
    conversation = sample["conversation"]
    speakers = [conversation["speaker_a"], conversation["speaker_b"]]
    numbers = sorted(int(k.split("_")[1]) for k in conversation
                     if re.fullmatch(r"session_\d+", k))
    out = []
    for number in numbers:
        date = session_date(conversation[f"session_{number}_date_time"])
        facts = []
        for turn in conversation[f"session_{number}"]:
            text = f"{turn['speaker']} on {date}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            other = speakers[1] if turn["speaker"] == speakers[0] else speakers[0]
            facts.append({"source": turn["speaker"], "target": other,
                          "relation_type": f"said {turn['dia_id']}", "fact": text,
                          "confidence": "extracted"})
        out.append((number, facts))
    return out


def load_conversation(principal, account, sample: dict, memory_name: str) -> dict[str, str]:
    """Write every session as one episode; returns fact_id -> dia_id."""
    from memories.graph.services import memory_create
    from tools.calling import run_validated
    from tools.registry import TOOLS

    memory_create(account_id=account.pk, name=memory_name)
    conversation = sample["conversation"]
    entities = [{"name": conversation[k], "type": "person"} for k in ("speaker_a", "speaker_b")]
    dia_by_fact: dict[str, str] = {}
    for index, (number, facts) in enumerate(sessions(sample)):
        reply = run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "memory": memory_name, "assume_new": index == 0,
            "session_id": f"{sample['sample_id']}/session_{number}",
            "entities": entities, "facts": facts,
        })
        assert reply["stored"], reply
        for edge in reply["edges_created"]:
            dia_by_fact[edge["fact_id"]] = edge["relation_type"].removeprefix("said ")
    return dia_by_fact


def evidence_of(question: dict, known: set[str]) -> list[str]:
    ids = []
    for item in question.get("evidence", []):
        ids += [part.strip() for part in str(item).split(";") if part.strip()]
    return [i for i in dict.fromkeys(ids) if i in known]


def retrieve(principal, memory_name: str, question: str) -> tuple[dict[str, list[str]], int]:
    """Top-10 fact ids of each retriever for one question, and the facts still waiting
    for their vector when the product answered."""
    from memories.core.scopes import partition_for
    from memories.graph.selectors import _query_vector, memory_for
    from memories.search import candidates
    from memories.search.window import Window
    from tools.calling import run_validated
    from tools.registry import TOOLS

    # The product first: under --immediate it is the call that meets the fresh facts.
    hybrid = run_validated(principal, TOOLS["query_memory"], {
        "scope": "shared", "memory": memory_name, "query": question, "top_k": 10})
    memory = memory_for(principal, memory_name)
    partition = partition_for(principal, "shared")
    window = Window()
    pool = 50
    text = candidates.text_candidates(memory.pk, partition, question, pool, window)
    vector = candidates.vector_candidates(memory.pk, partition, _query_vector(question), pool,
                                      window)
    return {
        "text": [str(c.fact_id) for c in text[:10]],
        "vector": [str(c.fact_id) for c in vector[:10]],
        "hybrid": [f["fact_id"] for f in hybrid["facts"]],
    }, hybrid["facts_pending_vector"]


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
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--immediate", action="store_true",
                      help="ask each conversation's questions right after it is written, "
                           "with the indexer in the background; also run settled and "
                           "print both")
    when.add_argument("--first-pass-only", action="store_true",
                      help="ask with nothing indexed and the query's own embedding off")
    args = parser.parse_args()

    fresh_instance(indexing="thread" if args.immediate else "manual")
    # --immediate measures when vectors exist, so every vector costs what it costs.
    cached = None if args.immediate else use_cached_embedder(queries_too=True)
    apply_overrides(args.set)

    samples = json.loads(args.data.read_text())[: args.limit_conversations]
    principal, account = bench_principal()
    if not args.immediate:
        if args.first_pass_only:
            from django.conf import settings

            settings.ECHO_MEMORY_QUERY_EMBED_FACTS = 0
        run = run_protocol(principal, account, samples, immediate=False, cached=cached,
                           index=not args.first_pass_only)
        report(run, samples, args.json)
        print("hybrid recall@10 per conversation: " + ", ".join(
            f"{sample['sample_id']} {r10(run, sample['sample_id']):.3f}" for sample in samples))
        return
    fresh = run_protocol(principal, account, samples, immediate=True)
    report(fresh, samples, args.json)
    settled = run_protocol(principal, account, samples, immediate=False, prefix="settled-")
    ours, theirs = (run["totals"][("hybrid", "overall")] for run in (fresh, settled))
    fresh_r10 = sum(r["r@10"] for r in ours) / len(ours)
    settled_r10 = sum(r["r@10"] for r in theirs) / len(theirs)
    print(f"\nhybrid recall@10: immediate {fresh_r10:.3f}, settled {settled_r10:.3f} "
          f"(difference {fresh_r10 - settled_r10:+.3f})")
    print("per conversation, immediate / settled: " + ", ".join(
        f"{sample['sample_id']} {r10(fresh, sample['sample_id']):.3f} / "
        f"{r10(settled, sample['sample_id']):.3f}" for sample in samples))
    latencies = sorted(fresh["latencies"])
    print(f"immediate: {fresh['waiting_questions']} of {fresh['questions']} questions met "
          f"facts still waiting for their vector; query_memory p50 "
          f"{latencies[len(latencies) // 2] * 1000:.0f} ms, p95 "
          f"{latencies[int(len(latencies) * 0.95)] * 1000:.0f} ms, max "
          f"{latencies[-1] * 1000:.0f} ms (the first question of a conversation pays for "
          "embedding what the indexer has not reached)")


def r10(run: dict, group: str) -> float:
    rows = run["totals"][("hybrid", group)]
    return sum(r["r@10"] for r in rows) / len(rows) if rows else 0.0


def run_protocol(principal, account, samples, *, immediate: bool, cached=None,
                 prefix: str = "", index: bool = True) -> dict:
    """Write each conversation and ask its questions: at once, or once indexing caught up
    (or, with `index` false and the indexer manual, with nothing indexed)."""
    from tqdm import tqdm

    from memories.search.indexing import index_pending, pending_count

    totals: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    started = time.perf_counter()
    turns = questions = skipped = waiting_questions = 0
    latencies: list[float] = []
    for sample in tqdm(samples, desc="immediate" if immediate else "conversations",
                       file=sys.stderr):
        memory_name = prefix + re.sub(r"[^a-z0-9_-]", "-", sample["sample_id"].lower())
        dia_by_fact = load_conversation(principal, account, sample, memory_name)
        if not immediate and index:
            index_pending()
            while pending_count():  # a background indexer's last batch
                time.sleep(0.05)
        if cached is not None:
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
            asked = time.perf_counter()
            results, waiting = retrieve(principal, memory_name, question["question"])
            latencies.append(time.perf_counter() - asked)
            waiting_questions += waiting > 0
            for retriever, fact_ids in results.items():
                ranked = [dia_by_fact.get(f, "") for f in fact_ids]
                figures = score(ranked, evidence)
                totals[(retriever, CATEGORIES[category])].append(figures)
                totals[(retriever, "overall")].append(figures)
                totals[(retriever, sample["sample_id"])].append(figures)
    return {"totals": totals, "turns": turns, "questions": questions, "skipped": skipped,
            "elapsed": time.perf_counter() - started, "latencies": latencies,
            "waiting_questions": waiting_questions}


def apply_overrides(assignments: list[str]) -> None:
    import ast
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
        # A tuple of weights is written as Python writes it: first_pass.CONTEXT_WEIGHTS=0.5,0.25;
        # a flag as True or False (bool("False") would be true).
        if isinstance(current, tuple):
            value = tuple(ast.literal_eval(raw))
        elif isinstance(current, bool):
            value = ast.literal_eval(raw) is True
        else:
            value = type(current)(raw)
        setattr(module, name, value)
        print(f"override: memories.{target} = {getattr(module, name)!r}", file=sys.stderr)


def report(run: dict, samples, json_path) -> None:
    totals, turns, questions = run["totals"], run["turns"], run["questions"]
    skipped, elapsed = run["skipped"], run["elapsed"]
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
