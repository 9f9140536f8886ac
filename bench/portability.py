"""Export and import (issue 39): the same answers, the same history, a second import a no-op;
then facts/s each way and peak memory at scale.

    .venv/bin/python bench/portability.py [--data LOCOMO.json] [--runbooks DIR]
                                          [--sizes 20000 100000] [--reembed-facts 2000]

1. Faithfulness, on one fresh box (the cached embedder, indexer manual, as ranking_cv):
   account A gets the LoCoMo conversations and the runbooks set exactly as
   bench/ranking_cv.py records them (one memory per conversation, one for the runbooks), and
   a memory of histories: --history-people people whose role changes three times, each
   version replacing the one before (superseded, with event times). Every memory is exported
   WITH vectors and imported into a fresh memory of the same name in account B, and exported
   WITHOUT vectors and imported into account C, whose facts the indexer then embeds again
   with the model itself (not the cache: --reembed-cached uses it). Every question
   ranking_cv asks goes to query_memory (the tool contract, top_k 10) on A, B and C; B's and
   C's fact ids are read back as A's through the importer's own record (ImportedRecord).
   Printed: questions whose top-10 lists are identical, recall@10 of each account and C's
   difference from A; every fact's history (text, ends, event times, record time,
   supersession and what replaced it, episode and place in it) compared between A and B and
   between A and C; then B's files imported into B again, with the rows counted before and
   after and what the importer reported.
2. Scale (bench/portability_scale.py): for each of --sizes, a source memory of that many
   synthetic facts exported to a file and imported into another account, with vectors and
   without: facts/s each way, the process's peak memory growth, the file's size; and the
   indexer re-embedding --reembed-facts facts of an import without vectors.
3. --second-box: the long form, A's memories moved to another box with the command line
   (bench/portability_boxes.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.setup import bench_principal, fresh_instance, use_cached_embedder

HISTORY = "histories"
ROLES = ["intern", "engineer", "tech lead", "engineering manager"]
DEFAULT_DATA = Path(__file__).resolve().parents[1] / "../shared/data/locomo/locomo_dev.json"


def load_a(principal, account, data: Path, runbooks: Path, cached, people: int):
    """Account A as ranking_cv records it: (labels: fact id -> set id per memory, questions)."""
    from bench.locomo import CATEGORIES, evidence_of, load_conversation
    from bench.runbooks_quality import MEMORY, load_into
    from memories.search.indexing import index_pending

    labels: dict[str, dict[str, str]] = {}
    questions: list[tuple[str, str, list[str]]] = []
    for sample in json.loads(data.read_text()):
        memory = re.sub(r"[^a-z0-9_-]", "-", sample["sample_id"].lower())
        labels[memory] = load_conversation(principal, account, sample, memory)
        index_pending()
        cached.save()
        known = set(labels[memory].values())
        for question in sample["qa"]:
            evidence = evidence_of(question, known)
            if question.get("category") in CATEGORIES and evidence:
                questions.append((memory, question["question"], evidence))
    labels[MEMORY], asked = load_into(principal, account, runbooks)
    questions += [(MEMORY, q["question"], q["evidence"]) for q in asked]
    write_histories(principal, account, people)
    index_pending()
    cached.save()
    return labels, questions


def write_histories(principal, account, people: int) -> None:
    """Each person's role, four versions one write apart, each replacing the one before."""
    from bench.scale_corpus import people as names
    from memories.graph.services import memory_create
    from tools.calling import run_validated
    from tools.registry import TOOLS

    memory_create(account_id=account.pk, name=HISTORY)
    everyone = names(people)
    for version, role in enumerate(ROLES):
        facts = [{"source": name, "target": "Tallyline", "relation_type": "role_at",
                  "fact": f"{name} is {'an' if role[0] in 'aei' else 'a'} {role} at Tallyline",
                  "valid_at": f"{2019 + version}-0{1 + n % 9}-01T00:00:00Z",
                  **({"invalid_at": f"{2020 + version}-0{1 + n % 9}-01T00:00:00Z"}
                     if version < len(ROLES) - 1 else {}),
                  "confidence": "extracted"} for n, name in enumerate(everyone)]
        reply = run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "memory": HISTORY, "assume_new": version == 0,
            "session_id": f"roles/{version}",
            "entities": [{"name": n, "type": "person"} for n in everyone]
            + [{"name": "Tallyline", "type": "company"}], "facts": facts})
        assert reply["stored"], reply


def copy_account(source, memories: list[str], into, into_account, folder: Path, *,
                 vectors: bool) -> dict[str, Path]:
    """Each memory exported to a file and imported into a fresh memory of `into_account`."""
    from memories.graph.services import memory_create
    from memories.portability.export import export_memory
    from memories.portability.import_ import import_memory
    from memories.portability.reading import bounded_lines

    files = {}
    for memory in memories:
        path = files[memory] = folder / f"{memory}-{'vectors' if vectors else 'plain'}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            out.writelines(export_memory(principal=source, memory=memory,
                                         include_vectors=vectors))
        memory_create(account_id=into_account.pk, name=memory)
        with path.open("rb") as stream:
            report = import_memory(principal=into, memory=memory, lines=bounded_lines(stream))
        print(f"  {memory}: {report.counts['fact'].created} facts imported, vectors "
              f"{report.vectors}", file=sys.stderr)
    return files


def source_of(account) -> dict[str, str]:
    """Local fact id -> the exporting box's fact id, as the importer recorded them."""
    from memories.import_records import ImportedRecord

    return {str(local): str(source) for local, source in ImportedRecord.objects.filter(
        memory__account=account, kind="fact").values_list("local_id", "source_id")}


def ask_all(principal, questions, back: dict[str, str] | None = None) -> list[list[str]]:
    """Each question's top 10 through query_memory, as A's fact ids."""
    from tools.calling import call_tool
    from tools.registry import TOOLS

    out = []
    for memory, question, _ in questions:
        reply = call_tool(principal, TOOLS["query_memory"],
                          {"scope": "shared", "memory": memory, "query": question, "top_k": 10})
        ids = [f["fact_id"] for f in reply["facts"]]
        out.append([back.get(i, "?") for i in ids] if back is not None else ids)
    return out


def recall10(lists, questions, labels) -> float:
    scores = [len({labels[memory].get(i) for i in ranked[:10]} & set(evidence)) / len(evidence)
              for ranked, (memory, _, evidence) in zip(lists, questions, strict=True)]
    return sum(scores) / len(scores)


def history(account) -> dict[str, tuple]:
    """Every fact of the account by its id: what its history is made of (ids as they are)."""
    from memories.models import Fact

    return {str(f["id"]): (f["memory__name"], f["fact"], f["relation_type"],
                           f["source__name"], f["target__name"], f["confidence"],
                           f["causal_hint"], f["created_at"], f["valid_at"], f["invalid_at"],
                           f["superseded_at"], str(f["superseded_by_id"] or ""),
                           str(f["episode_id"]), f["position"], f["partition"])
            for f in Fact.objects.filter(memory__account=account).values(
                "id", "memory__name", "fact", "relation_type", "source__name", "target__name",
                "confidence", "causal_hint", "created_at", "valid_at", "invalid_at",
                "superseded_at", "superseded_by_id", "episode_id", "position", "partition")}


def compare_history(a: dict[str, tuple], other: dict[str, tuple], back: dict[str, str],
                    episodes_back: dict[str, str]) -> dict[str, int]:
    """Facts compared, those that differ, replaced facts and links, record-time order."""
    mine = {back[i]: (*row[:11], back.get(row[11], row[11]) if row[11] else "",
                      episodes_back.get(row[12], "?"), *row[13:])
            for i, row in other.items()}
    differ = sum(1 for i, row in a.items() if mine.get(i) != row) + len(set(mine) - set(a))

    def order(rows: dict[str, tuple]) -> list[str]:
        return [i for i, _ in sorted(rows.items(), key=lambda item: (item[1][7], item[1][13],
                                                                       item[0]))]

    return {"compared": len(a), "differ": differ,
            "replaced": sum(1 for row in a.values() if row[10] is not None),
            "links": sum(1 for row in a.values() if row[11]),
            "order_same": order(a) == order(mine)}


def episode_source_of(account) -> dict[str, str]:
    from memories.import_records import ImportedRecord

    return {str(local): str(source) for local, source in ImportedRecord.objects.filter(
        memory__account=account, kind="episode").values_list("local_id", "source_id")}


def counts(account) -> Counter:
    from memories.import_records import ImportedRecord
    from memories.models import Entity, Episode, Fact

    models = {"episodes": Episode, "entities": Entity, "facts": Fact,
              "import records": ImportedRecord}
    return Counter({name: model.objects.filter(memory__account=account).count()
                    for name, model in models.items()})


def faithfulness(args, folder: Path) -> None:
    cached = use_cached_embedder(queries_too=True)
    from memories.search import embeddings
    from memories.search.indexing import index_pending, pending_count

    a, a_account = bench_principal("a")
    b, b_account = bench_principal("b")
    c, c_account = bench_principal("c")
    labels, questions = load_a(a, a_account, args.data, args.runbooks, cached,
                               args.history_people)
    memories = [*labels, HISTORY]
    started = time.perf_counter()
    files = copy_account(a, memories, b, b_account, folder, vectors=True)
    print(f"  A -> B with vectors: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    copy_account(a, memories, c, c_account, folder, vectors=False)
    if not args.reembed_cached:
        embeddings._embedder = cached.inner
    started = time.perf_counter()
    embedded = index_pending()
    embeddings._embedder = cached
    print(f"  C re-embedded {embedded} facts in {time.perf_counter() - started:.0f}s "
          f"({'cache' if args.reembed_cached else 'the model'}); still waiting: "
          f"{pending_count()}", file=sys.stderr)
    back_b, back_c = source_of(b_account), source_of(c_account)
    on_a = ask_all(a, questions)
    on_b = ask_all(b, questions, back_b)
    on_c = ask_all(c, questions, back_c)
    cached.save()
    show_differences(a, b, back_b, questions, on_a, on_b, args.show_differences)
    same_b = sum(x == y for x, y in zip(on_a, on_b, strict=True))
    same_c = sum(x == y for x, y in zip(on_a, on_c, strict=True))
    r_a, r_b, r_c = (recall10(lists, questions, labels) for lists in (on_a, on_b, on_c))
    locomo = sum(1 for q in questions if q[0] != "tallyline-ops")
    print(f"\nExport and import: {locomo} LoCoMo and {len(questions) - locomo} runbooks "
          f"questions (ranking_cv's), {len(memories)} memories, load "
          f"{os.getloadavg()[0]:.1f}")
    print(f"with vectors (A -> B): identical top-10 lists {same_b}/{len(questions)}; "
          f"recall@10 A {r_a:.4f}, B {r_b:.4f}")
    print(f"re-embedded (A -> C): identical top-10 lists {same_c}/{len(questions)}; "
          f"recall@10 A {r_a:.4f}, C {r_c:.4f}, difference {r_c - r_a:+.4f}")
    for name, kept in (("LoCoMo", lambda q: q[0] != "tallyline-ops"),
                       ("runbooks", lambda q: q[0] == "tallyline-ops")):
        index = [n for n, q in enumerate(questions) if kept(q)]
        part = [questions[n] for n in index]
        print(f"  {name}: recall@10 " + ", ".join(
            f"{side} {recall10([lists[n] for n in index], part, labels):.4f}"
            for side, lists in (("A", on_a), ("B", on_b), ("C", on_c))))
    print(vector_drift(a_account, c_account, back_c))
    a_history = history(a_account)
    for name, account, back in (("B", b_account, back_b), ("C", c_account, back_c)):
        found = compare_history(a_history, history(account), back, episode_source_of(account))
        print(f"history A vs {name}: {found['compared']} facts compared, {found['differ']} "
              f"differ; {found['replaced']} replaced facts, {found['links']} supersession "
              f"links; record-time order {'the same' if found['order_same'] else 'DIFFERS'}")
    second_import(b, b_account, files)
    if args.second_box:
        from bench.portability_boxes import second_box

        second_box(a_account, memories, questions, on_a, labels, recall10)


def show_differences(a, b, back_b, questions, on_a, on_b, most: int) -> None:
    """The first `most` questions whose lists differ, each fact with A's score and text."""
    from bench.fusion import FusionTap
    from memories.search import hybrid
    from tools.calling import call_tool
    from tools.registry import TOOLS

    shown = 0
    tap = FusionTap(hybrid).install() if most else None
    for (memory, question, _), mine, theirs in zip(questions, on_a, on_b, strict=True):
        if mine == theirs or shown >= most:
            continue
        shown += 1
        tap.calls.clear()
        asked = {"scope": "shared", "memory": memory, "query": question, "top_k": 10}
        call_tool(b, TOOLS["query_memory"], asked)
        there = tap.take_one()
        reply = call_tool(a, TOOLS["query_memory"], asked)
        here = tap.take_one()
        for kind in ("vector", "text"):
            ours = [(str(c.fact_id), round(c.score, 6)) for c in getattr(here, kind)]
            theirs_ = [(back_b.get(str(c.fact_id)), round(c.score, 6))
                       for c in getattr(there, kind)]
            pairs = zip(ours, theirs_, strict=False)
            first = next((n for n, (x, y) in enumerate(pairs) if x != y), None)
            print(f"  {kind} candidates: {len(ours)} / {len(theirs_)}, first difference at "
                  f"{first}: {ours[first] if first is not None else ''} / "
                  f"{theirs_[first] if first is not None else ''}", file=sys.stderr)
        print(f"differs: {memory}: {question!r}", file=sys.stderr)
        for n, fact in enumerate(reply["facts"]):
            where = theirs.index(fact["fact_id"]) if fact["fact_id"] in theirs else None
            print(f"  A {n} B {where} score {fact['score']} {fact['matched']} "
                  f"{fact['created_at']} {fact['fact'][:60]!r}", file=sys.stderr)


def vector_drift(a_account, c_account, back_c: dict[str, str]) -> str:
    """How C's re-embedded vectors compare with A's, fact by fact."""
    import numpy as np

    from memories.models import Fact

    def vectors(account) -> dict[str, np.ndarray]:
        return {str(pk): np.asarray(v.to_list() if hasattr(v, "to_list") else v, np.float32)
                for pk, v in Fact.objects.filter(memory__account=account, embedding__isnull=False)
                .values_list("id", "embedding")}

    mine, theirs = vectors(a_account), vectors(c_account)
    pairs = [(mine[back_c[i]], v) for i, v in theirs.items() if back_c.get(i) in mine]
    same = sum(1 for x, y in pairs if np.array_equal(x, y))
    worst = max((abs(1 - float(x @ y) / float(np.linalg.norm(x) * np.linalg.norm(y)))
                 for x, y in pairs), default=0.0)
    return (f"C's vectors: {len(pairs)} facts, {same} bit-identical to A's, largest cosine "
            f"distance {worst:.2e}")


def second_import(b, b_account, files: dict[str, Path]) -> None:
    from memories.portability.import_ import import_memory
    from memories.portability.reading import bounded_lines

    before = counts(b_account)
    created, present = Counter(), Counter()
    for memory, path in files.items():
        with path.open("rb") as stream:
            report = import_memory(principal=b, memory=memory, lines=bounded_lines(stream))
        for kind, count in report.counts.items():
            created[kind] += count.created
            present[kind] += count.already_present
    after = counts(b_account)
    print("second import of the same files into B: rows before " + ", ".join(
        f"{k} {before[k]}" for k in sorted(before)) + "; after " + ", ".join(
        f"{k} {after[k]}" for k in sorted(after)))
    print(f"the importer reported: created {sum(created.values())}; already present "
          + ", ".join(f"{k} {v}" for k, v in present.items() if v))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA.resolve(),
                        help="the LoCoMo conversations (default the dev set in ../shared)")
    parser.add_argument("--runbooks", type=Path,
                        default=Path(__file__).resolve().parent / "data/runbooks")
    parser.add_argument("--history-people", type=int, default=200,
                        help="people in the memory of histories (four versions each)")
    parser.add_argument("--reembed-cached", action="store_true",
                        help="re-embed C through the vector cache instead of the model")
    parser.add_argument("--sizes", type=int, nargs="*", default=[20000, 100000],
                        help="facts in each scale run's source memory (none: skip scale)")
    parser.add_argument("--people", type=int, default=1000,
                        help="people the synthetic facts name (scale)")
    parser.add_argument("--systems", type=int, default=None,
                        help="systems the synthetic facts name (default all 1,131; scale)")
    parser.add_argument("--reembed-facts", type=int, default=2000,
                        help="facts the indexer re-embeds after an import without vectors")
    parser.add_argument("--import-sizes", type=int, nargs="*", default=None,
                        help="import only at these of --sizes (default: at every size)")
    parser.add_argument("--skip-faithfulness", action="store_true")
    parser.add_argument("--show-differences", type=int, default=0, metavar="N",
                        help="print the first N questions whose lists differ between A and B")
    parser.add_argument("--second-box", action="store_true",
                        help="also move A's memories to a new box with `echo-memory export` "
                             "and `import`, and ask there (bench/portability_boxes.py)")
    parser.add_argument("--answer-on", nargs=3, metavar=("HOME", "QUESTIONS", "OUT"),
                        help="(what --second-box runs on the second box)")
    args = parser.parse_args()
    if args.answer_on:
        from bench.portability_boxes import answer_on

        home, asked, out = args.answer_on
        answer_on(home, Path(asked), Path(out), ask_all)
        return

    fresh_instance(indexing="manual")
    with tempfile.TemporaryDirectory(prefix="echo-portability-") as folder:
        if not args.skip_faithfulness:
            faithfulness(args, Path(folder))
        if args.sizes:
            from bench.portability_scale import run

            run(args.sizes, Path(folder), people=args.people, systems=args.systems, real=2000,
                reembed_facts=args.reembed_facts, import_sizes=args.import_sizes)


if __name__ == "__main__":
    main()
