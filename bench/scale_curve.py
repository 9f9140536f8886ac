"""The curve past the real corpus (issue 42): a kept bench/scale_real.py box grown point by
point, HNSW rebuilt and measured at each, and a projection to 10M from the points.

    nice -n 19 .venv/bin/python bench/scale_curve.py --box /work/echo-real-1m \
        --to 2000000 3000000 [--base-hnsw-seconds 236] [--budget-minutes 120]
    nice -n 19 .venv/bin/python bench/scale_curve.py --calibrate 2000

Not part of CI. Past the corpus the facts are bench/real_recombined.py's: two sentences
of one memory joined, with a stand-in vector (the normalized mean of the two sentences'
cached vectors, not the model's); `--calibrate N` embeds N of them with the model and
says how close the stand-ins are.

For each --to point, in order:

1. Grow. Every index of the fact table that backs no constraint (the HNSW graph, the
   word index, ...) is dropped, as bench/scale_real_load.py's load does, then the facts
   are written by its COPY in chunks of --chunk, ids in order (fact_id), each chunk
   committed with its word statistics; so a killed or stopped run resumes at the first
   id the box lacks. The box's curve.json keeps what a resumed run needs (the dropped
   indexes, the step's time so far, the points measured). VACUUM (ANALYZE) after.
2. Build the indexes again, the graph last (build_hnsw: time, peak memory, size), with
   maintenance_work_mem --mwm-per-million GB a million facts (at least 4GB), so the graph
   fits in it as it is built (pgvector slows to a crawl past it).
3. Measure as bench/scale_real.py does, at the service's ef_search and iterative scan:
   recall@10 per class against exact search (numpy over every vector of the memory,
   stand-ins included), and query_memory over HTTP (the service only; not with
   --no-http). Sizes of every relation.

Past --budget-minutes the run stops after the chunk (or step) in hand and says so; the
same command resumes it. Points already measured are kept and reprinted. The table then
has a row per point, and a projection to --project facts is fitted on the points (the
box's starting size included when it was the corpus' whole: its sizes read from the box,
its build time from --base-hnsw-seconds).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import real_corpus, scale_load, scale_real, scale_real_load
from bench.real_recombined import Recombined, Table
from bench.scale import log, mb, restart_with, stop_box
from bench.setup import fresh_instance

STATE = "curve.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--box", help="a kept bench/scale_real.py box (--keep) loaded with "
                                      "the whole corpus; grown in place")
    parser.add_argument("--to", type=int, nargs="+", default=[],
                        help="the table's sizes to measure at, e.g. 2000000 3000000")
    parser.add_argument("--chunk", type=int, default=scale_real_load.CHUNK,
                        help="facts a COPY, each committed on its own")
    parser.add_argument("--budget-minutes", type=float, default=120)
    parser.add_argument("--queries", type=int, default=200,
                        help="questions per class for recall, as many others for latency")
    parser.add_argument("--verify", type=int, default=1,
                        help="questions per class checked against Postgres' exact search "
                             "(a sequential scan of the whole table each)")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--shared-buffers", default="4GB")
    parser.add_argument("--mwm-per-million", type=float, default=1.3,
                        help="maintenance_work_mem for the HNSW build, GB a million facts")
    parser.add_argument("--base-hnsw-seconds", type=float, default=None,
                        help="the graph's build time at the box's starting size, if known "
                             "(236 for the 1M box of docs/benchmarks.md), for the projection")
    parser.add_argument("--project", type=int, default=10_000_000)
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--recall-ef", type=int, nargs="+", default=None, metavar="EF",
                        help="only: recall@10 per class at the box's size as it is, at these "
                             "hnsw.ef_search values (no growth, no HTTP)")
    parser.add_argument("--base", type=int, default=None, metavar="N",
                        help="grow from the corpus' first N rows instead of all of it (a box "
                             "that scale_real.py loaded with --facts N: when the corpus is "
                             "not all embedded yet); the box remembers it")
    parser.add_argument("--calibrate", type=int, default=None, metavar="N",
                        help="only: embed N recombined facts with the model and compare "
                             "their stand-in vectors (no box)")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    if args.calibrate:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")
        calibrate(args.calibrate)
        return
    if not args.box or not (args.to or args.recall_ef):
        parser.error("--box and --to (or --recall-ef), or --calibrate")
    began = time.perf_counter()
    home = Path(args.box)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    fresh_instance(indexing="manual", keep=str(home))
    try:
        restart_with(home, args.shared_buffers)
        if args.recall_ef:
            recall_at(args, home)
        else:
            run(args, home, began)
    finally:
        stop_box(home)


def run(args, home: Path, began: float) -> None:
    from accounts.models import Account
    from memories.models import Memory

    state = _read_state(home)
    base_rows = _base_rows(args, state)
    _write_state(home, state)
    held = facts_held()
    if held < len(base_rows):
        raise SystemExit(f"{home} holds {held:,} facts, fewer than the corpus' "
                         f"{len(base_rows):,}: load it with bench/scale_real.py --keep first")
    recombined = Recombined(base_rows, real_corpus.vectors(len(base_rows)),
                            max([held, *args.to]))
    _check_texts(recombined, held)
    points = state.setdefault("points", {})
    if held == len(base_rows) and str(held) not in points and not state.get("dropped"):
        points[str(held)] = {"facts": held, "start": True, **_sizes(held)}
    for point in points.values():
        if point.get("start") and args.base_hnsw_seconds:
            point["hnsw_seconds"] = args.base_hnsw_seconds
    _write_state(home, state)
    memory_ids = dict(Memory.objects.values_list("name", "pk"))
    key = None
    stopped = None
    for target in sorted(set(args.to)):
        if str(target) in points:
            continue
        if held > target:
            log(f"the box holds {held:,} facts, past {target:,}: that point is skipped")
            continue
        pending = state.setdefault("pending", {"to": target, "load_seconds": 0.0})
        if pending["to"] != target:
            raise SystemExit(f"{home}/{STATE} has a step to {pending['to']:,} unfinished: "
                             f"run with --to {pending['to']} first")
        if held < target:
            drop_indexes(home, state)
            held = grow(args, home, state, recombined, memory_ids, held, target, began)
            if held < target:
                stopped = f"{held:,} facts in the box, growing to {target:,}"
                break
        if state.get("dropped"):
            if "vacuum" not in pending:
                started = time.perf_counter()
                _vacuum()
                pending["vacuum"] = time.perf_counter() - started
                _write_state(home, state)
            if _over(args, began):
                stopped = f"{held:,} facts in the box, indexes not built yet"
                break
            mwm = f"{max(4096, math.ceil(args.mwm_per_million * 1024 * target / 1e6))}MB"
            _check_memory(mwm)
            log(f"building the indexes at {target:,} facts, maintenance_work_mem {mwm}")
            drop_indexes(home, state)  # any a killed build had made already
            timings = scale_real_load.build_indexes(state["dropped"], mwm)
            pending["indexes"] = sum(s for n, s in timings["indexes"].items()
                                     if n != "fact_embedding")
            pending["hnsw"] = timings.get("hnsw")
            state["dropped"] = []
            _write_state(home, state)
        if _over(args, began):
            stopped = f"{held:,} facts in the box, indexes built, not measured yet"
            break
        if key is None and not args.no_http:
            key = scale_real.run_key(Account.objects.get(name="bench account"))
        points[str(target)] = measure(args, home, key, recombined, memory_ids, target, pending)
        del state["pending"]
        _write_state(home, state)
    report(args, points)
    count = facts_held()
    print(f"\nthe box holds {count:,} facts, ids 1-{count:,}"
          f"{' without a gap' if _dense(count) else ' WITH GAPS'}")
    if stopped:
        print(f"\nStopped after {args.budget_minutes:g} minutes ({stopped}). Run the same "
              "command again to resume where it stopped.")


def _check_texts(recombined: Recombined, held: int) -> None:
    """The box's facts are this corpus' (a rebuilt corpus would pair other sentences and
    give the exact search other vectors than the box holds): 200 of them compared."""
    from django.db import connection

    sample = sorted({0, held - 1, *np.random.default_rng().integers(0, held, 198).tolist()})
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, fact FROM memories_fact WHERE id = ANY(%s)",
                       [[scale_real_load.fact_id(i) for i in sample]])
        held_texts = {scale_real.row_of(i): fact for i, fact in cursor.fetchall()}
    wrong = [i for i in sample if held_texts.get(i) != recombined.rows(i, i + 1)[0]["f"]]
    if wrong:
        raise SystemExit(f"{len(wrong)} of {len(sample)} facts sampled differ from the corpus' "
                         f"(fact {wrong[0]:,} first): the box was loaded from another corpus")


def facts_held() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_fact")
        return cursor.fetchone()[0]


def _dense(count: int) -> bool:
    """Whether the facts are ids fact_id(0) .. fact_id(count - 1), each once: what a
    resumed run counts on (the primary key forbids an id twice)."""
    from django.db import connection

    with connection.cursor() as cursor:
        # The last id by the primary key (uuid has no max()).
        cursor.execute("SELECT id FROM memories_fact ORDER BY id DESC LIMIT 1")
        return cursor.fetchone()[0] == scale_real_load.fact_id(count - 1)


def drop_indexes(home: Path, state: dict) -> None:
    """The fact table's indexes that back no constraint, noted in the state before they
    are dropped (a run killed in between drops what is left and builds them all)."""
    from django.db import connection

    with connection.cursor() as cursor:
        if not state.get("dropped"):
            state["dropped"] = scale_load.droppable_indexes(cursor, "memories_fact")
            _write_state(home, state)
        for name, _ in state["dropped"]:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


def grow(args, home: Path, state: dict, recombined: Recombined, memory_ids: dict[str, int],
         held: int, target: int, began: float) -> int:
    """Facts held .. target - 1 by COPY, --chunk at a time, each chunk committed with its
    word statistics; returns how many the box holds (fewer than target: out of time)."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.db.models import Count

    from accounts.models import ApiKey
    from memories.models import Entity, Fact
    from memories.search.storing import count_terms

    if not _dense(held):
        raise SystemExit(f"the box's {held:,} facts are not ids 1-{held:,}: not resumable")
    holder = get_user_model().objects.get(username="bench").pk
    key = ApiKey.objects.get(tool="bench").pk
    entities = {(m, n): i for m, n, i in Entity.objects.values_list("memory__name", "name", "id")}
    per_memory = defaultdict(int, Fact.objects.values_list("memory__name").annotate(Count("id")))
    # A recombined fact is written at its first sentence's place in the year the load
    # spread the corpus over (what it dates matters to no vector search).
    base = recombined.base
    epoch, step = datetime.now(UTC) - timedelta(days=365), timedelta(days=365) / base
    log(f"growing from {held:,} to {target:,} facts")
    for start in range(held, target, args.chunk):
        end = min(start + args.chunk, target)
        started = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            scale_real_load.write_facts(
                cursor, indexes=range(start, end), rows=recombined.rows(start, end),
                vectors=recombined.vectors(np.arange(start, end)), memory_ids=memory_ids,
                entities=entities, per_memory=per_memory, holder_id=holder, key_id=key,
                created=[epoch + step * ((i - base) % base) for i in range(start, end)])
            count_terms(cursor, [scale_real_load.fact_id(i) for i in range(start, end)])
        state["pending"]["load_seconds"] += time.perf_counter() - started
        _write_state(home, state)
        log(f"  {end:,} facts ({state['pending']['load_seconds']:.0f} s this step)")
        held = end
        if held < target and _over(args, began):
            break
    return held


def _vacuum() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("memories_fact", "memories_episode", "memories_termstat"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")


def measure(args, home: Path, key: str | None, recombined: Recombined,
            memory_ids: dict[str, int], size: int, pending: dict) -> dict:
    """One point: scale_real's recall per class at the service's settings (the exact
    path's timing left out: seconds a question at these sizes), HTTP latency, sizes."""
    from memories.search.candidates import HNSW_EF_SEARCH

    table = Table(recombined, size)
    measured = measured_classes(table, recombined, memory_ids)
    # The service's settings: its ef_search, relaxed iterative scan, pgvector's default
    # max_scan_tuples.
    settings = ("relaxed", 20_000, HNSW_EF_SEARCH)
    options = argparse.Namespace(
        queries=args.queries, verify=args.verify, scan=[settings[0]],
        max_scan_tuples=[settings[1]], ef_search=[settings[2]], no_exact_path=True,
        web_workers=args.web_workers)
    log(f"recall at {size:,} facts")
    found = scale_real.recall(options, table, table.vectors, memory_ids, measured)
    timed = (None if args.no_http else
             scale_real.latency(options, home, key, measured, modes=("service",)))
    classes = {}
    for label, name in measured:
        s = found[label]["settings"][settings]
        classes[name] = {"label": label, "recall": s["at10"], "near": s["near"],
                         "questions": found[label]["questions"],
                         "mismatch": found[label]["verify_mismatch"],
                         "http": timed[label]["service"] if timed else None}
    hnsw = pending.get("hnsw") or {}
    return {"facts": size, "load_seconds": pending["load_seconds"] + pending.get("vacuum", 0),
            "indexes_seconds": pending.get("indexes"), "hnsw_seconds": hnsw.get("seconds"),
            "peak_rss": hnsw.get("peak_rss"), "backend_peak": hnsw.get("backend_peak"),
            "mwm": hnsw.get("maintenance_work_mem"), **_sizes(size), "classes": classes,
            "load_average": os.getloadavg()[0], "when": time.strftime("%Y-%m-%d %H:%M")}


def _base_rows(args, state: dict) -> list[dict]:
    """The corpus rows the box grows from: all of them, or the first --base (kept in the
    box's state, so a resumed run cannot pair other sentences)."""
    if args.base and state.get("base", args.base) != args.base:
        raise SystemExit(f"the box grew from the corpus' first {state['base']:,} rows, "
                         f"not {args.base:,}: pass --base {state['base']}")
    base = args.base or state.get("base")
    if base:
        state["base"] = base
    return real_corpus.rows(base)


def recall_at(args, home: Path) -> None:
    """recall@10 per class on the box as it stands, at each of --recall-ef (relaxed
    iterative scan, pgvector's default max_scan_tuples): what a higher ef_search buys at
    this size."""
    from memories.models import Memory

    base_rows = _base_rows(args, _read_state(home))
    held = facts_held()
    recombined = Recombined(base_rows, real_corpus.vectors(len(base_rows)), held)
    _check_texts(recombined, held)
    table = Table(recombined, held)
    memory_ids = dict(Memory.objects.values_list("name", "pk"))
    measured = measured_classes(table, recombined, memory_ids)
    options = argparse.Namespace(
        queries=args.queries, verify=args.verify, scan=["relaxed"], max_scan_tuples=[20_000],
        ef_search=args.recall_ef, no_exact_path=True, web_workers=args.web_workers)
    found = scale_real.recall(options, table, table.vectors, memory_ids, measured)
    print(f"\nrecall@10 at {held:,} facts (relaxed, max_scan_tuples 20,000); "
          "HNSW p50 / p95 ms in this process\n")
    print("| class | ef_search | recall@10 | within 0.01 of the 10th | HNSW p50 / p95 |")
    print("|---|---:|---:|---:|---:|")
    for label, _ in measured:
        for (_, _, ef), r in found[label]["settings"].items():
            print(f"| {label} | {ef} | {r['at10']:.3f} | {r['near']:.3f} | "
                  f"{r['ms'][0]:.1f} / {r['ms'][1]:.1f} |")


def measured_classes(table: Table, recombined: Recombined, memory_ids: dict[str, int]
                     ) -> list[tuple[str, str]]:
    """scale_real's classes at the corpus' size, the same memories at every point: grown,
    a small memory passes 10k facts (and has no questions), the small class's one
    EXACT_SEARCH_MAX (the product then searches it by the graph), or another would take
    its place. Labelled as scale_real does at this size, or by their size here."""
    now = {name: label for label, name in scale_real.classes(table, memory_ids)}
    sizes = recombined.sizes(len(table))
    return [(now.get(name, f"was {label.split(',')[0]}, {sizes[name]:,} facts"), name)
            for label, name in scale_real.classes(recombined.base_rows, memory_ids)]


def _sizes(facts: int) -> dict:
    relations = [s for s in scale_load.sizes() if s[0] != "memories_auditevent"]
    index = sum(size for _, relation, size, _ in relations if relation == "fact_embedding")
    total = sum(size for _, _, size, _ in relations)
    return {"index": index or None, "total": total, "per_fact": total / facts}


def _check_memory(mwm: str) -> None:
    with open("/proc/meminfo") as meminfo:
        available = next(int(line.split()[1]) for line in meminfo
                         if line.startswith("MemAvailable:")) // 1024
    if int(mwm.removesuffix("MB")) > available:
        log(f"maintenance_work_mem {mwm} is more than the {available:,} MB available: the "
            "build may swap or be killed")


def _over(args, began: float) -> bool:
    return time.perf_counter() - began > args.budget_minutes * 60


def _read_state(home: Path) -> dict:
    path = home / STATE
    return json.loads(path.read_text()) if path.exists() else {}


def _write_state(home: Path, state: dict) -> None:
    path = home / STATE
    path.with_suffix(".tmp").write_text(json.dumps(state, indent=1))
    path.with_suffix(".tmp").replace(path)


def _cell(value, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def report(args, points: dict) -> None:
    rows = sorted(points.values(), key=lambda p: p["facts"])
    names = list(dict.fromkeys(n for p in rows for n in p.get("classes", {})))
    print(f"\nThe curve: real sentences, recombined past the corpus ({os.cpu_count()} cores, "
          f"shared_buffers {args.shared_buffers}). load: COPY, word statistics and VACUUM "
          f"(ANALYZE) of the step; recall@10 against exact search at the service's "
          f"settings; HTTP p50 / p95 ms of query_memory, one client\n")
    header = ["facts", "load s", "other indexes s", "HNSW build s", "maintenance_work_mem",
              "peak RSS", "index", "all relations", "bytes/fact", *(f"recall {n}" for n in names),
              *(f"HTTP {n}" for n in names)]
    print("| " + " | ".join(header) + " |")
    print("|---:" * len(header) + "|")
    for p in rows:
        classes = p.get("classes", {})
        recall = [_cell(classes.get(n, {}).get("recall"), ".3f") for n in names]
        http = [("-" if not classes.get(n, {}).get("http") else
                 "{:.1f} / {:.1f}".format(*classes[n]["http"])) for n in names]
        print(f"| {p['facts']:,}{' (start)' if p.get('start') else ''} | "
              f"{_cell(p.get('load_seconds'), '.0f')} | {_cell(p.get('indexes_seconds'), '.0f')} | "
              f"{_cell(p.get('hnsw_seconds'), '.0f')} | "
              f"{p.get('mwm') or '-'} | {mb(p['peak_rss']) if p.get('peak_rss') else '-'} | "
              f"{mb(p['index']) if p.get('index') else '-'} | {mb(p['total'])} | "
              f"{p['per_fact']:,.0f} |" + "".join(f" {c} |" for c in recall + http))
    for p in rows:
        for n, c in p.get("classes", {}).items():
            if c["mismatch"]:
                print(f"  ({p['facts']:,}, {n}: numpy and Postgres exact disagree on "
                      f"{c['mismatch']} checked top-10 entries)")
    projection(args, rows)


def projection(args, rows: list[dict]) -> None:
    """Size linear in N; the graph's build time as a N log N and as a power law, fitted on
    the points measured. Printed as what it is."""
    to = args.project
    sized = [(p["facts"], p["total"], p.get("index")) for p in rows]
    built = [(p["facts"], p["hnsw_seconds"]) for p in rows if p.get("hnsw_seconds")]
    print(f"\nProjection to {to:,} facts (fitted on {len(sized)} measured sizes and "
          f"{len(built)} build times; a projection, not a measurement):")
    if len(sized) >= 2:
        n = np.array([s[0] for s in sized], dtype=float)
        slope, intercept = np.polyfit(n, [s[1] for s in sized], 1)
        total = slope * to + intercept
        print(f"  every relation: {mb(total)} ({slope:,.0f} bytes a fact more); the disk "
              f"needs that plus WAL (max_wal_size) and room for an index rebuilt beside it; "
              f"free now {shutil.disk_usage(args.box).free / 2**30:,.0f} GB")
        indexed = [s for s in sized if s[2]]
        if len(indexed) >= 2:
            fit = np.polyfit([s[0] for s in indexed], [s[2] for s in indexed], 1)
            print(f"  HNSW index: {mb(np.polyval(fit, to))}")
    else:
        print("  sizes: two points needed")
    if built:
        x = np.array([b[0] * math.log(b[0]) for b in built])
        a = float(np.dot(x, [b[1] for b in built]) / np.dot(x, x))
        print(f"  HNSW build, a N log N: {a * to * math.log(to) / 60:,.0f} min")
    if len(built) >= 2:
        k, c = np.polyfit(np.log([b[0] for b in built]), np.log([b[1] for b in built]), 1)
        print(f"  HNSW build, power law N^{k:.2f}: {math.exp(c) * to ** k / 60:,.0f} min")
    print(f"  maintenance_work_mem for the graph to fit: about "
          f"{args.mwm_per_million * to / 1e6:,.0f} GB ({args.mwm_per_million:g} GB a million)")


def calibrate(count: int) -> None:
    """The stand-in vectors against the model's for `count` recombined facts (the first
    ones: every memory's): cosine; and in the big memory, a pool of its recombined facts
    and their first sentences, the top 10 for its questions with stand-ins against with
    the model's vectors."""
    from memories.search.embeddings import get_embedder

    base_rows = real_corpus.rows()
    base = len(base_rows)
    recombined = Recombined(base_rows, real_corpus.vectors(base), base + count)
    rows = recombined.rows(base, base + count)
    standin = recombined.vectors(np.arange(base, base + count)).astype(np.float32)
    embedder = get_embedder()
    real_corpus.log(f"embedding {count:,} recombined facts")
    real = np.asarray(embedder.embed([real_corpus.embedded_text(r) for r in rows]),
                      dtype=np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    standin /= np.linalg.norm(standin, axis=1, keepdims=True)
    cosine = np.sum(standin * real, axis=1)
    print(f"stand-in against the model, {count:,} recombined facts: cosine mean "
          f"{cosine.mean():.3f}, p5 {np.percentile(cosine, 5):.3f}, min {cosine.min():.3f}")
    big = np.array([k for k, r in enumerate(rows) if r["m"] == "big"])
    questions = real_corpus.questions().get("big", [])[:200]
    if not len(big) or not questions:
        return
    first, _ = recombined.pairs(base + big)
    parts = recombined.base_vectors[first].astype(np.float32)
    queries = np.asarray(embedder.embed(questions), dtype=np.float32)
    tops = {}
    for name, joined in (("standin", standin[big]), ("real", real[big])):
        pool = np.vstack([joined, parts])
        pool /= np.linalg.norm(pool, axis=1, keepdims=True)
        tops[name] = np.argsort(-(queries @ pool.T), axis=1)[:, :10]
    at10 = statistics.mean(len(set(a) & set(b)) / min(10, len(a))
                           for a, b in zip(tops["standin"], tops["real"], strict=True))
    share = {name: float((top < len(big)).mean()) for name, top in tops.items()}
    print(f"in the big memory, a pool of {len(big):,} recombined facts and their first "
          f"sentences, {len(questions)} questions: recall@10 of the stand-ins against the "
          f"model's top 10 {at10:.3f}; recombined facts among the top 10: "
          f"{share['standin']:.2f} with stand-ins, {share['real']:.2f} with the model's")


if __name__ == "__main__":
    main()
