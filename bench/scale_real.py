"""Scale on real sentences: HNSW recall against exact search and query latency, at 100k
and 1M facts, in one big memory and in memories of 10k-200k among many.

    nice -n 19 .venv/bin/python bench/real_corpus.py build
    nice -n 19 .venv/bin/python bench/real_corpus.py embed [--upto 100000]
    nice -n 19 .venv/bin/python bench/scale_real.py --facts 100000 [--keep /tmp/echo-real-100k]

Not part of CI. The corpus, its memories and questions are bench/real_corpus.py's. On a
private box (embedded PostgreSQL 18 + pgvector, shared_buffers --shared-buffers, the rest
default), one account:

1. Load (bench/scale_real_load.py): the first --facts rows of the corpus, each in its
   memory, by COPY with their cached vectors; word statistics, VACUUM (ANALYZE), indexes
   built after, the HNSW graph last with --m / --ef-construction. Build time, peak memory
   and sizes are printed. With --keep on a box already loaded, the load is skipped (and
   the graph rebuilt only if --m / --ef-construction differ from the kept one's).
2. Recall. Per class of memory (the big one: "unfiltered"; each memory of 10k or more
   other facts: "filtered"; a small one, searched exactly by the product), --queries of
   that memory's questions, embedded by the model here. The service's vector search
   (candidates.vector_candidates: 50 candidates) at each --ef-search, with the
   iterative scan mode and max_scan_tuples of --scan, against exact search: the cosine
   of every vector of the memory, in numpy, from the same half-precision values
   (--verify questions are checked against Postgres with index scans off).
   recall@10: the share of the exact 10 nearest in the first 10; recall@50 the same for
   the pool; "within 0.01": the share of the first 10 at most 0.01 below the exact 10th's
   cosine (a near-tie found instead of the exact one). The time of each search in this
   process, and of the product's per-memory exact path (vector_candidates(exact=True),
   every vector of the memory read through its index) beside it.
3. Latency. `echo-memory serve` on the box; per class, --queries other questions of the
   memory (none asked twice, none among the warm-up ones, so the server embeds each) to
   query_memory (top_k 10) over /mcp, one client, timed at the client: p50 / p95. Then the
   same questions on a server whose EXACT_SEARCH_MAX is over every memory's size (the
   per-memory exact path everywhere), side by side.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import real_corpus, scale_load, scale_real_load
from bench.engine_perf import percentile
from bench.scale import (
    Client,
    log,
    mb,
    restart_with,
    start_process,
    stop_box,
    stop_process,
    wait_healthy,
)
from bench.setup import bench_principal, fresh_instance

POOL = 50  # the service's: max(CANDIDATES_PER_RETRIEVER, 2 * top_k)
SCANS = {"relaxed": "relaxed_order", "strict": "strict_order", "off": "off"}


def p(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), percentile(values, 95)


def classes(rows: list[dict], memory_ids: dict[str, int]) -> list[tuple[str, str]]:
    """(label, memory) of what is measured: the big memory, each memory of 10k facts or
    more, and the largest memory the product searches exactly."""
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[row["m"]] = sizes.get(row["m"], 0) + 1
    return classes_of(sizes, memory_ids)


def classes_of(sizes: dict[str, int], memory_ids: dict[str, int]) -> list[tuple[str, str]]:
    """classes() from the facts each memory holds."""
    from memories.search.candidates import EXACT_SEARCH_MAX

    total = sum(sizes.values())
    out = [(f"unfiltered: big, {sizes['big']:,} facts", "big")] if "big" in sizes else []
    for name, size in sorted(sizes.items(), key=lambda x: x[1]):
        if name != "big" and size >= 10_000:
            out.append((f"filtered: {name}, {size:,} of {total:,}", name))
    small = max((n for n, s in sizes.items() if s <= EXACT_SEARCH_MAX and
                 n.startswith("locomo-")), key=lambda n: sizes[n], default=None)
    if small:
        out.append((f"small: {small}, {sizes[small]:,} (exact in the product)", small))
    return [(label, name) for label, name in out if name in memory_ids]


def exact_neighbours(block: np.ndarray, norms: np.ndarray, members: np.ndarray,
                     query: np.ndarray, k: int) -> list[int]:
    """Row indexes of the k nearest by cosine among `members` (whose vectors, as float32
    from the half-precision values Postgres holds, are `block`, of length `norms`)."""
    q = query.astype(np.float16).astype(np.float32)
    cosine = block @ q / (norms * np.linalg.norm(q))
    # A memory of k facts or fewer (a rehearsal on a tiny corpus) is its own k nearest.
    top = np.argpartition(-cosine, k)[:k] if k < len(cosine) else np.arange(len(cosine))
    return [int(members[i]) for i in top[np.argsort(-cosine[top])]]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a.astype(np.float32)
    b = b.astype(np.float16).astype(np.float32)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def row_of(fact_id) -> int:
    return fact_id.int - 1


def hnsw_search(memory_id: int, vector: np.ndarray, ef: int, scan: str, max_tuples: int
                ) -> tuple[list[int], float]:
    from django.db import connection, transaction

    from memories.search import candidates
    from memories.search.window import Window

    candidates.HNSW_EF_SEARCH = ef
    candidates.HNSW_ITERATIVE_SCAN = SCANS[scan]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {max_tuples}")
        started = time.perf_counter()
        found = candidates.vector_candidates(memory_id, "shared", vector, POOL, Window())
        elapsed = (time.perf_counter() - started) * 1000
    return [row_of(c.fact_id) for c in found], elapsed


def exact_search(memory_id: int, vector: np.ndarray, size: int) -> tuple[list[int], float]:
    """The product's per-memory exact path, allowed over the whole memory."""
    from django.db import transaction

    from memories.search import candidates
    from memories.search.window import Window

    saved = candidates.EXACT_SEARCH_MAX
    candidates.EXACT_SEARCH_MAX = max(saved, size)
    try:
        with transaction.atomic():
            started = time.perf_counter()
            found = candidates.vector_candidates(memory_id, "shared", vector, POOL, Window(),
                                                 exact=True)
            elapsed = (time.perf_counter() - started) * 1000
    finally:
        candidates.EXACT_SEARCH_MAX = saved
    return [row_of(c.fact_id) for c in found], elapsed


def postgres_exact(memory_id: int, vector: np.ndarray) -> list[int]:
    from django.db import connection, transaction

    from memories.search import candidates
    from memories.search.window import Window

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off")
        found = candidates.vector_candidates(memory_id, "shared", vector, POOL, Window())
    return [row_of(c.fact_id) for c in found]


def recall(args, rows, vectors, memory_ids, measured) -> dict:
    """Per class: exact neighbours, then each setting's recall@10/@50 and time (the
    service's settings are put back after)."""
    from memories.search import candidates

    saved = candidates.HNSW_EF_SEARCH, candidates.HNSW_ITERATIVE_SCAN
    try:
        return _recall(args, rows, vectors, memory_ids, measured)
    finally:
        candidates.HNSW_EF_SEARCH, candidates.HNSW_ITERATIVE_SCAN = saved


def _recall(args, rows, vectors, memory_ids, measured) -> dict:
    from memories.search.embeddings import get_embedder

    embedder = get_embedder()
    members: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        members.setdefault(row["m"], []).append(i)
    out = {}
    for label, name in measured:
        questions = real_corpus.questions()[name][:args.queries]
        query_vectors = embedder.embed(questions)
        index = np.array(members[name])
        block = vectors[index].astype(np.float32)
        norms = np.linalg.norm(block, axis=1)
        exact = [exact_neighbours(block, norms, index, v, POOL) for v in query_vectors]
        del block
        tenth = [_cosine(vectors[e[9]], v) for v, e in zip(query_vectors, exact, strict=True)]
        mismatch = 0
        for v, e in list(zip(query_vectors, exact, strict=True))[:args.verify]:
            mismatch += len(set(e[:10]) - set(postgres_exact(memory_ids[name], v)[:10]))
        settings = {}
        for scan in args.scan:
            for max_tuples in args.max_scan_tuples:
                for ef in args.ef_search:
                    at10, at50, ms, near = [], [], [], []
                    for v, e, t in zip(query_vectors, exact, tenth, strict=True):
                        found, elapsed = hnsw_search(memory_ids[name], v, ef, scan, max_tuples)
                        at10.append(len(set(found[:10]) & set(e[:10])) / 10)
                        near.append(sum(_cosine(vectors[f], v) >= t - 0.01
                                        for f in found[:10]) / 10)
                        at50.append(len(set(found) & set(e)) / len(e))
                        ms.append(elapsed)
                    settings[(scan, max_tuples, ef)] = {
                        "at10": statistics.mean(at10), "at50": statistics.mean(at50),
                        "near": statistics.mean(near),
                        "worst": min(at10), "below": sum(r < 0.8 for r in at10), "ms": p(ms)}
                    log(f"{name} {scan} {max_tuples} ef {ef}: recall@10 "
                        f"{settings[(scan, max_tuples, ef)]['at10']:.3f}")
        exact_ms = []
        for v, e in zip(query_vectors, exact, strict=True):
            if args.no_exact_path:
                break
            found, elapsed = exact_search(memory_ids[name], v, len(index))
            exact_ms.append(elapsed)
            assert set(found[:10]) == set(e[:10]) or len(set(found[:10]) & set(e[:10])) >= 9
        out[label] = {"questions": len(questions), "settings": settings,
                      "exact_ms": p(exact_ms) if exact_ms else None,
                      "verify_mismatch": mismatch}
    return out


# `echo-memory serve` with EXACT_SEARCH_MAX set once Django is set up (in the server
# process, before gunicorn's workers fork or load the app).
SERVE_WITH_EXACT_MAX = """
import sys, django
setup, maximum = django.setup, int(sys.argv[1])
def patched(*args, **kwargs):
    setup(*args, **kwargs)
    from memories.search import candidates
    candidates.EXACT_SEARCH_MAX = maximum
django.setup = patched
from echomem.cli import main
sys.argv = ["echo-memory", *sys.argv[2:]]
sys.exit(main())
"""


def latency(args, home: Path, key: str, measured, modes=("service", "exact")) -> dict:
    """Per class: query_memory over HTTP on the service as it is, then (unless `modes`
    leaves it out) on a server that searches every memory exactly, the same questions."""
    from django.db import connections

    from memories.search.candidates import EXACT_SEARCH_MAX
    from tests.harness import free_port

    connections.close_all()
    env = {**os.environ, "ECHO_MEMORY_HOME": str(home), "ECHO_MEMORY_INDEXING": "manual",
           "ECHO_MEMORY_RATE_LIMIT_PER_MINUTE": "100000000"}
    for variable in ("ECHO_MEMORY_STATEMENT_TIMEOUT_MS", "ECHO_MEMORY_LOCK_TIMEOUT_MS",
                     "REDIS_URL", "CELERY_BROKER_URL"):
        env.pop(variable, None)
    out = {label: {} for label, _ in measured}
    for mode, maximum in (("service", EXACT_SEARCH_MAX), ("exact", 10**9)):
        if mode not in modes:
            continue
        port = free_port()
        server = start_process([sys.executable, "-c", SERVE_WITH_EXACT_MAX, str(maximum),
                                "serve", "--port", str(port), "--workers",
                                str(args.web_workers), "--threads", "4"], env, f"serve-{mode}")
        try:
            wait_healthy(port)
            client = Client(f"http://127.0.0.1:{port}/mcp", key)
            with client.http() as http:
                for label, name in measured:
                    # Questions the recall step did not ask; the first 20 warm up.
                    questions = real_corpus.questions()[name][args.queries:]
                    if len(questions) < 40:
                        questions = real_corpus.questions()[name]
                    # Fewer warm-ups when there are too few questions (a tiny corpus).
                    warm = questions[:max(0, min(20, len(questions) - args.queries))]
                    timed = questions[len(warm):len(warm) + args.queries]
                    for q in warm:
                        client.call(http, "query_memory", _args(name, q))
                    ms = [client.call(http, "query_memory", _args(name, q))[0] * 1000
                          for q in timed]
                    out[label][mode] = p(ms)
                    out[label]["questions"] = len(timed)
                    log(f"{name} over HTTP, {mode}: p50 {out[label][mode][0]:.1f} "
                        f"p95 {out[label][mode][1]:.1f} ms")
        finally:
            stop_process(server)
    return out


def _args(memory: str, question: str) -> dict:
    return {"scope": "shared", "memory": memory, "query": question, "top_k": 10}


def loaded(home: Path, facts: int) -> dict[str, int] | None:
    """The kept box's memories, if it holds a load (of `facts` facts: another size is an
    error, not a reason to measure the wrong table)."""
    from memories.models import Fact, Memory

    if not Fact.objects.exists():
        return None
    held = Fact.objects.count()
    if held != facts:
        raise SystemExit(f"{home} holds {held:,} facts, not {facts:,}: use another --keep")
    return dict(Memory.objects.values_list("name", "pk"))


def current_hnsw() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef('fact_embedding'::regclass)")
        return cursor.fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000,
                        help="the table's size: 100000, or 1000000 for the whole corpus (a "
                             "smaller number loads a prefix, for a quick rehearsal)")
    parser.add_argument("--queries", type=int, default=200,
                        help="questions per class for recall, and as many others for latency")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 64, 128, 256])
    parser.add_argument("--scan", nargs="+", default=["relaxed"], choices=list(SCANS))
    parser.add_argument("--max-scan-tuples", type=int, nargs="+", default=[20_000])
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--verify", type=int, default=5,
                        help="questions per class checked against Postgres' exact search")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--shared-buffers", default="4GB")
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--no-exact-path", action="store_true",
                        help="skip timing exact search, in this process and over HTTP "
                             "(seconds a question for memories of millions)")
    parser.add_argument("--keep", default=None,
                        help="a directory to keep the box in; a kept load is reused")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    began = time.perf_counter()
    home = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="echo-real-"))
    home.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    fresh_instance(indexing="manual", keep=str(home))
    try:
        run(args, home, began)
    finally:
        stop_box(home)
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)


def run(args, home: Path, began: float) -> None:
    restart_with(home, args.shared_buffers)
    from django.contrib.auth import get_user_model

    from accounts.models import Account, ApiKey

    rows = real_corpus.rows(args.facts)
    vectors = real_corpus.vectors(args.facts)
    memory_ids = loaded(home, len(rows))
    timings, load_sizes = None, None
    definition = scale_real_load.hnsw_definition(args.m, args.ef_construction)
    if memory_ids is None:
        _, account = bench_principal()
        user = get_user_model().objects.get(username="bench")
        log(f"loading {len(rows):,} facts")
        started = time.perf_counter()
        timings, memory_ids = scale_real_load.load(
            account_id=account.pk, holder_id=user.pk,
            key_id=ApiKey.objects.get(tool="bench").pk, rows=rows, vectors=vectors)
        timings["all"] = time.perf_counter() - started
        if (args.m, args.ef_construction) != (16, 64):
            timings["hnsw"] = scale_real_load.build_hnsw(definition)
        load_sizes = scale_load.sizes()
    else:
        account = Account.objects.get(name="bench account")
        kept = current_hnsw().replace(" ", "")
        if (f"m='{args.m}'" not in kept
                or f"ef_construction='{args.ef_construction}'" not in kept):
            log(f"rebuilding the HNSW graph: {definition}")
            timings = {"hnsw": scale_real_load.build_hnsw(definition)}
    plaintext = run_key(account)
    measured = classes(rows, memory_ids)
    log("recall against exact search")
    found = recall(args, rows, vectors, memory_ids, measured)
    modes = ("service",) if args.no_exact_path else ("service", "exact")
    timed = None if args.no_http else latency(args, home, plaintext, measured, modes)
    report(args, timings, load_sizes, found, timed, current_hnsw(),
           time.perf_counter() - began)


def run_key(account) -> str:
    """A key of this run's own (the load's plaintext is not kept with a kept box)."""
    from django.contrib.auth import get_user_model

    from accounts.services import api_key_create

    _, plaintext = api_key_create(account=account, holder=get_user_model().objects.get(
        username="bench"), name=f"run {time.time():.0f}", tool="bench-run")
    return plaintext


def report(args, timings, load_sizes, found, timed, hnsw_def, total_seconds) -> None:
    from memories.search.candidates import EXACT_SEARCH_MAX, HNSW_EF_SEARCH

    print(f"\nScale on real sentences: {args.facts:,} facts ({os.cpu_count()} cores, "
          f"shared_buffers {args.shared_buffers}; whole run {total_seconds / 60:.0f} min; "
          f"load average {os.getloadavg()[0]:.1f} / {os.getloadavg()[2]:.1f} (1 / 15 min))")
    print(f"HNSW: {hnsw_def.split(' USING ')[1]}")
    if timings:
        if "copy" in timings:
            print(f"\nLoad: {timings['all']:.0f} s in all; entities {timings['entities']:.0f} s, "
                  f"COPY {timings['copy']:.0f} s, word statistics "
                  f"{timings['word_statistics']:.0f} s, VACUUM (ANALYZE) "
                  f"{timings['vacuum']:.0f} s, indexes {sum(timings['indexes'].values()):.0f} s")
            for name, seconds in timings["indexes"].items():
                print(f"  {name}: {seconds:.1f} s")
        h = timings["hnsw"]
        print(f"HNSW build: {h['seconds']:.0f} s, maintenance_work_mem "
              f"{h['maintenance_work_mem']}, 2 parallel workers; peak RSS of the database's "
              f"processes {mb(h['peak_rss'])} (shared buffers they touched included), the "
              f"building backend's own peak {mb(h['backend_peak'])}; index {mb(h['size'])}")
    if load_sizes:
        print("\n| table | relation | rows | size | bytes per fact |")
        print("|---|---|---:|---:|---:|")
        for table, relation, size, rows in load_sizes:
            if table != "memories_auditevent" and size:
                print(f"| {table} | {relation} | {rows:,} | {mb(size)} | "
                      f"{size / args.facts:,.0f} |")
        total = sum(s for t, _, s, _ in load_sizes if t != "memories_auditevent")
        print(f"| all | | | {mb(total)} | {total / args.facts:,.0f} |")

    print(f"\nHNSW against exact search, {POOL} candidates (the service's vector search); "
          f"exact = numpy over the memory's half-precision vectors (checked against "
          f"Postgres on {args.verify} questions a class). Times in this process, ms.\n")
    print("| class | scan | max_scan_tuples | ef_search | recall@10 | within 0.01 of the 10th "
          "| under 0.8 | worst | recall@50 | HNSW p50 / p95 | exact path p50 / p95 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in found.items():
        for (scan, tuples, ef), s in r["settings"].items():
            service = " (service)" if ef == HNSW_EF_SEARCH and scan == "relaxed" else ""
            print(f"| {label} | {scan} | {tuples:,} | {ef}{service} | {s['at10']:.3f} | "
                  f"{s['near']:.3f} | {s['below']} | {s['worst']:.1f} | {s['at50']:.3f} | "
                  f"{s['ms'][0]:.1f} / "
                  f"{s['ms'][1]:.1f} | {_pair(r['exact_ms'])} |")
        if r["verify_mismatch"]:
            print(f"  ({label}: numpy and Postgres exact disagree on {r['verify_mismatch']} "
                  "of the checked top-10 entries)")
    if timed:
        print(f"\nquery_memory, top_k 10, one client; the product searches exactly at most "
              f"{EXACT_SEARCH_MAX:,} facts. ms p50 / p95:\n")
        print("| class | questions | HTTP, the service | HTTP, every memory searched exactly |")
        print("|---|---:|---:|---:|")
        for label, t in timed.items():
            print(f"| {label} | {t['questions']} | {t['service'][0]:.1f} / "
                  f"**{t['service'][1]:.1f}** | "
                  + (f"{t['exact'][0]:.1f} / {t['exact'][1]:.1f} |" if "exact" in t else "- |"))


def _pair(values) -> str:
    return f"{values[0]:.1f} / {values[1]:.1f}" if values else "-"


if __name__ == "__main__":
    main()
