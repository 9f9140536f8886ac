"""Transport overhead: the same tool calls through POST /mcp and on the services directly.

    .venv/bin/python bench/transport.py [--facts 100000] [--calls 300] [--clients 4]
                                        [--redis redis://127.0.0.1:6379/5] [--box DIR]

One private box (embedded PostgreSQL in a temp dir) gets an account and --facts facts,
written by write_episode in episodes of 500 and given embeddings in bulk SQL (random
unit vectors: the embedder's speed is the engine benchmark's subject, not this one's)
and the indexer's word statistics.
Then `echo-memory serve` runs on that box and each call is timed both ways:

- direct: the service function in this process (parse + engine), one caller;
- HTTP, 1 client: a JSON-RPC tools/call on one MCP session, alternating call by call
  with a direct one, so a change in the load of a shared machine hits both sides alike;
- HTTP, --clients concurrent threads on that session.

The server runs as the single box does (database rate limiter, sessions and key cache in
Postgres) or, with --redis URL, as production does (REDIS_URL: rate limits and cache in
Redis). A last table times each step a request takes before the engine, in this process
on the same database, to say where the transport's time goes. --box DIR keeps the loaded
box in DIR and reuses it on the next run (loading 100k facts takes minutes).

Both sides use the same few query texts, warmed first, so the query embedding is
cached on both and the difference is the transport: HTTP, auth, rate limit, session,
JSON. Both sides run with ECHO_MEMORY_INDEXING=manual (facts written during the run are
not embedded) for the same reason. Prints requests/s, p50 and p95 per path and the
HTTP/direct ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.setup import bench_principal, fresh_instance

QUERIES = ["who maintains the billing service", "why did the deploy fail",
           "which team owns the cache", "what depends on the database cluster"]
EPISODE = 500
ECHO_MEMORY = str(Path(sys.executable).parent / "echo-memory")


def load(principal, total: int) -> None:
    from django.db import connection
    from tqdm import tqdm

    from tools.calling import run_validated
    from tools.registry import TOOLS

    services = [f"Service {i}" for i in range(200)]
    for start in tqdm(range(0, total, EPISODE), desc="loading facts", unit="episode"):
        facts = [{"source": services[i % 200], "target": services[(i * 7 + 1) % 200],
                  "relation_type": f"depends_{i}",
                  "fact": f"{services[i % 200]} depends on {services[(i * 7 + 1) % 200]} "
                          f"for {QUERIES[i % 4].split()[-1]} number {i}.",
                  "confidence": "extracted"}
                 for i in range(start, min(total, start + EPISODE))]
        run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "assume_new": start == 0, "facts": facts,
            "entities": [{"name": s, "type": "service"} for s in services]})
    # Filling 100k vectors under a live HNSW index inserts them one by one (many minutes);
    # dropping it and building it again in memory takes a fraction of that.
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'fact_embedding'")
        definition = cursor.fetchone()[0]
        cursor.execute("DROP INDEX fact_embedding")
        index_waiting(cursor)
        cursor.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        cursor.execute(definition)
        print(f"HNSW index built in {time.perf_counter() - started:.0f}s", file=sys.stderr)
        cursor.execute("ANALYZE memories_fact")


def index_waiting(cursor) -> None:
    """What the indexer does, in bulk SQL: a vector for every fact waiting for one, and
    those facts' BM25 word statistics, as a served memory has them. (A kept box gets this
    for the facts its last run's writes left, or its queries would embed them.)"""
    from memories.search.storing import count_terms

    cursor.execute(
        "UPDATE memories_fact SET embedding = (SELECT array_agg(random() - 0.5)::halfvec "
        "FROM generate_series(1, 384) WHERE memories_fact.id IS NOT NULL) "
        "WHERE embedding IS NULL RETURNING id")
    ids = [row[0] for row in cursor.fetchall()]
    if ids:
        count_terms(cursor, ids)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered) * 1000,
            ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000)


def arguments(tool: str, i: int) -> dict:
    if tool == "query_memory":
        return {"scope": "shared", "query": QUERIES[i % 4], "top_k": 10}
    return {"scope": "shared", "entities": [{"name": "Service 1", "type": "service"},
                                            {"name": "Service 2", "type": "service"}],
            "facts": [{"source": "Service 1", "target": "Service 2",
                       "relation_type": f"bench_{i}_{time.monotonic_ns()}",
                       "fact": f"Service 1 called Service 2 in run {i}.",
                       "confidence": "extracted"}]}


def open_session(endpoint: str, key: str) -> str:
    import httpx

    reply = httpx.post(endpoint, headers=headers_for(key), timeout=60,
                       json={"jsonrpc": "2.0", "id": 0, "method": "initialize",
                             "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
    return reply.headers["mcp-session-id"]


def headers_for(key: str, session: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    return {**headers, "Mcp-Session-Id": session} if session else headers


def post_call(http, endpoint: str, tool: str, i: int) -> float:
    body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments(tool, i)}}
    started = time.perf_counter()
    reply = http.post(endpoint, json=body)
    elapsed = time.perf_counter() - started
    assert reply.status_code == 200 and not reply.json()["result"]["isError"], reply.text
    return elapsed


def server_cpu(server_pid: int) -> float:
    """CPU seconds the server's worker processes have used (user + system)."""
    import psutil

    return sum(sum(child.cpu_times()[:2]) for child in psutil.Process(server_pid).children())


def paired(principal, endpoint: str, key: str, tool: str, calls: int,
           server_pid: int) -> tuple[dict, dict]:
    """Direct and HTTP (one client), alternating call by call. Besides the wall times, the
    CPU each side spends per call (this thread for direct, the server's worker for HTTP;
    Postgres's own is in neither), which a busy machine inflates much less."""
    import httpx

    from tools.calling import call_tool
    from tools.registry import TOOLS

    session = open_session(endpoint, key)
    direct_times, http_times, direct_cpu = [], [], 0.0
    with httpx.Client(headers=headers_for(key, session), timeout=60) as http:
        for i in range(-5, calls):  # the first five warm both sides
            if i == 0:
                server_started = server_cpu(server_pid)
            cpu = time.thread_time()
            started = time.perf_counter()
            call_tool(principal, TOOLS[tool], arguments(tool, i))
            elapsed = time.perf_counter() - started
            cpu = time.thread_time() - cpu
            through_http = post_call(http, endpoint, tool, i)
            if i >= 0:
                direct_times.append(elapsed)
                http_times.append(through_http)
                direct_cpu += cpu
    http_cpu = server_cpu(server_pid) - server_started
    return ({"rps": len(direct_times) / sum(direct_times), "times": direct_times,
             "cpu_ms": direct_cpu / calls * 1000},
            {"rps": len(http_times) / sum(http_times), "times": http_times,
             "cpu_ms": http_cpu / calls * 1000})


def over_http(endpoint: str, key: str, tool: str, calls: int, clients: int) -> dict:
    import httpx

    session = open_session(endpoint, key)
    times: list[float] = []
    lock = threading.Lock()

    def worker(share: range) -> None:
        with httpx.Client(headers=headers_for(key, session), timeout=60) as http:
            for i in share:
                elapsed = post_call(http, endpoint, tool, i)
                with lock:
                    times.append(elapsed)

    worker(range(-5, 0))  # warm: the server's query-embedding cache and connections
    times.clear()
    threads = [threading.Thread(target=worker, args=(range(c, calls, clients),))
               for c in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"rps": calls / (time.perf_counter() - started), "times": times}


def median_us(step, repeats: int) -> float:
    for _ in range(5):
        step()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def where_the_time_goes(endpoint: str, key: str, redis_url: str | None, repeats: int,
                        server_pid: int) -> list[tuple[str, float]]:
    """Each step a request takes before the engine, alone (in this process, on the same
    database); and whole requests that reach no tool."""
    import httpx
    from django.db import connection

    from accounts.principal import principal_from_key
    from echomem import ratelimit
    from mcp_gateway import sessions

    principal = principal_from_key(key)
    session = open_session(endpoint, key)
    if redis_url:
        limiter = ratelimit.RedisRateLimiter(redis_url)
        backend = "Redis"
    else:
        limiter, backend = ratelimit.DatabaseRateLimiter(), "database"

    def count() -> None:
        limiter.hit("bench:steps", limit=10**9, window_ms=60_000, now_ms=ratelimit.clock())

    def key_from_database() -> None:
        try:
            from accounts import key_cache
        except ImportError:  # a version that reads the key on every request
            pass
        else:
            key_cache.forget()
        principal_from_key(key)

    def health_check() -> None:  # what CONN_HEALTH_CHECKS costs each request
        connection.health_check_done = False
        connection.close_if_health_check_failed()

    steps = [
        ("connection health check (Django's, per request)", health_check),
        ("key lookup, read from the database", key_from_database),
        ("key lookup, as a request finds it", lambda: principal_from_key(key)),
        (f"rate-limit count ({backend})", count),
        ("session lookup", lambda: sessions.session_for(principal, session)),
    ]
    results = [(label, median_us(step, repeats)) for label, step in steps]
    with httpx.Client(headers=headers_for(key, session), timeout=60) as http:
        def ping() -> None:
            assert http.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
                             ).status_code == 200

        cpu = server_cpu(server_pid)
        results.append(("whole request: ping over /mcp (every gate, no tool), wall",
                        median_us(ping, repeats)))
        results.append(("the same: the server worker's CPU per ping",
                        (server_cpu(server_pid) - cpu) / (repeats + 5) * 1e6))
    return results


def load_box(args) -> tuple[Path, str]:
    """The loaded box: kept from an earlier run with --box, else made and loaded now."""
    marker = Path(args.box) / "bench-transport.json" if args.box else None
    if marker is not None and marker.exists():
        saved = json.loads(marker.read_text())
        if saved["facts"] == args.facts:
            home = fresh_instance(indexing="manual", keep=args.box)
            _stop_on_exit(home)
            from django.db import connection

            with connection.cursor() as cursor:
                index_waiting(cursor)
            return home, saved["key"]
        sys.exit(f"{args.box} holds {saved['facts']} facts, not {args.facts}: give another "
                 "--box, or the same --facts")
    home = fresh_instance(indexing="manual", keep=args.box)
    if args.box:
        _stop_on_exit(home)
    principal, _ = bench_principal()
    from django.contrib.auth import get_user_model

    from accounts.services import api_key_create

    user = get_user_model().objects.get(username="bench")
    _, key = api_key_create(account=user.accounts.first(), holder=user, name="http",
                            tool="bench-http")
    began = time.perf_counter()
    load(principal, args.facts)
    print(f"loaded {args.facts} facts in {time.perf_counter() - began:.0f}s", file=sys.stderr)
    if marker is not None:
        marker.write_text(json.dumps({"facts": args.facts, "key": key}))
    return home, key


def _stop_on_exit(home: Path) -> None:
    """A kept box's database stops with the run (fresh_instance only does so for its own)."""
    import atexit

    from echomem import embedded_db

    atexit.register(embedded_db.stop, home)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--redis", metavar="URL",
                        help="serve with REDIS_URL=URL (production's rate limiter and cache)")
    parser.add_argument("--box", metavar="DIR", help="keep the loaded box here; reuse it")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)

    home, key = load_box(args)
    from django.db import connections

    from accounts.principal import principal_from_key

    principal = principal_from_key(key)  # the direct side acts with the same key

    connections.close_all()

    from tests.harness import free_port

    port = free_port()
    env = {**os.environ, "ECHO_MEMORY_HOME": str(home), "ECHO_MEMORY_INDEXING": "manual",
           "ECHO_MEMORY_RATE_LIMIT_PER_MINUTE": "1000000"}
    if args.redis:
        env["REDIS_URL"] = args.redis
    server = subprocess.Popen([ECHO_MEMORY, "serve", "--port", str(port), "--threads", "8"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"server pid {server.pid}", file=sys.stderr)
    endpoint = f"http://127.0.0.1:{port}/mcp"
    try:
        import httpx

        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        rows = []
        for tool in ("query_memory", "write_episode"):
            d, one = paired(principal, endpoint, key, tool, args.calls, server.pid)
            many = over_http(endpoint, key, tool, args.calls, args.clients)
            rows.append((tool, d, one, many))
        steps = where_the_time_goes(endpoint, key, args.redis, args.calls, server.pid)
    finally:
        server.terminate()
        server.wait(30)

    shape = "Redis (REDIS_URL)" if args.redis else "single box (database rate limiter)"
    print(f"\nTransport overhead at {args.facts} facts ({args.calls} calls each; "
          f"{os.cpu_count()} cores; server: 1 gunicorn worker, 8 threads; {shape})\n")
    print("| tool | path | req/s | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|")
    for tool, d, one, many in rows:
        for label, result in (("direct (services)", d), ("HTTP /mcp, 1 client", one),
                              (f"HTTP /mcp, {args.clients} clients", many)):
            p50, p95 = percentiles(result["times"])
            print(f"| {tool} | {label} | {result['rps']:.0f} | {p50:.1f} | {p95:.1f} |")
    print("\n| tool | p50 HTTP/direct | req/s direct/HTTP (1 client) | CPU ms/call direct "
          "| CPU ms/call server (HTTP) |")
    print("|---|---:|---:|---:|---:|")
    for tool, d, one, _ in rows:
        ratio = percentiles(one["times"])[0] / percentiles(d["times"])[0]
        print(f"| {tool} | {ratio:.2f}x | {d['rps'] / one['rps']:.2f}x | {d['cpu_ms']:.2f} "
              f"| {one['cpu_ms']:.2f} |")
    print("\n| step (median of each alone) | µs |")
    print("|---|---:|")
    for label, micros in steps:
        print(f"| {label} | {micros:.0f} |")


if __name__ == "__main__":
    main()
