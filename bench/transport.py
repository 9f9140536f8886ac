"""Transport overhead: the same tool calls through POST /mcp and on the services directly.

    .venv/bin/python bench/transport.py [--facts 100000] [--calls 300] [--clients 4]

One private box (embedded PostgreSQL in a temp dir) gets an account and --facts facts,
written by write_episode in episodes of 500 and given embeddings in bulk SQL (random
unit vectors: the embedder's speed is the engine benchmark's subject, not this one's)
and the indexer's word statistics.
Then `echo-memory serve` runs on that box and each call is timed both ways:

- direct: the service function in this process (parse + engine), one caller;
- HTTP: a JSON-RPC tools/call on one MCP session, from --clients concurrent threads
  (and from one thread, for latency next to direct).

Both sides use the same few query texts, warmed first, so the query embedding is
cached on both and the difference is the transport: HTTP, auth, rate limit, session,
JSON. Both sides run with ECHO_MEMORY_INDEXING=manual (facts written during the run are
not embedded) for the same reason. Prints requests/s, p50 and p95 per path and the
HTTP/direct ratios.
"""

from __future__ import annotations

import argparse
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

    from memories.schemas import WriteEpisodeArgs, parse
    from memories.services import write_episode

    services = [f"Service {i}" for i in range(200)]
    for start in tqdm(range(0, total, EPISODE), desc="loading facts", unit="episode"):
        facts = [{"source": services[i % 200], "target": services[(i * 7 + 1) % 200],
                  "relation_type": f"depends_{i}",
                  "fact": f"{services[i % 200]} depends on {services[(i * 7 + 1) % 200]} "
                          f"for {QUERIES[i % 4].split()[-1]} number {i}.",
                  "confidence": "extracted"}
                 for i in range(start, min(total, start + EPISODE))]
        write_episode(principal, parse(WriteEpisodeArgs, {
            "scope": "shared", "assume_new": start == 0, "facts": facts,
            "entities": [{"name": s, "type": "service"} for s in services]}))
    # Filling 100k vectors under a live HNSW index inserts them one by one (many minutes);
    # dropping it and building it again in memory takes a fraction of that.
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'fact_embedding'")
        definition = cursor.fetchone()[0]
        cursor.execute("DROP INDEX fact_embedding")
        cursor.execute(
            "UPDATE memories_fact SET embedding = (SELECT array_agg(random() - 0.5)::halfvec "
            "FROM generate_series(1, 384) WHERE memories_fact.id IS NOT NULL) "
            "WHERE embedding IS NULL")
        # The indexer's other half: BM25 word statistics, as a served memory has them.
        from memories.indexing import count_terms

        cursor.execute("SELECT array_agg(id) FROM memories_fact")
        count_terms(cursor, cursor.fetchone()[0])
        cursor.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        cursor.execute(definition)
        print(f"HNSW index built in {time.perf_counter() - started:.0f}s", file=sys.stderr)
        cursor.execute("ANALYZE memories_fact")


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


def direct(principal, tool: str, calls: int) -> dict:
    from mcp_gateway.tools import TOOLS, call_tool

    for i in range(5):
        call_tool(principal, TOOLS[tool], arguments(tool, i))
    times = []
    started = time.perf_counter()
    for i in range(calls):
        t = time.perf_counter()
        call_tool(principal, TOOLS[tool], arguments(tool, i))
        times.append(time.perf_counter() - t)
    return {"rps": calls / (time.perf_counter() - started), "times": times}


def over_http(endpoint: str, key: str, tool: str, calls: int, clients: int) -> dict:
    import httpx

    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=60) as http:
        opened = http.post(endpoint, json={"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                           "params": {"protocolVersion": "2025-06-18",
                                                      "capabilities": {}}})
        session = opened.headers["mcp-session-id"]
    times: list[float] = []
    lock = threading.Lock()

    def worker(share: range) -> None:
        with httpx.Client(headers={**headers, "Mcp-Session-Id": session}, timeout=60) as http:
            for i in share:
                body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": tool, "arguments": arguments(tool, i)}}
                t = time.perf_counter()
                reply = http.post(endpoint, json=body)
                elapsed = time.perf_counter() - t
                assert reply.status_code == 200 and not reply.json()["result"]["isError"], reply
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)

    home = fresh_instance(indexing="manual")
    from django.db import connections

    principal, _ = bench_principal()
    from django.contrib.auth import get_user_model

    from accounts.services import api_key_create

    user = get_user_model().objects.get(username="bench")
    _, key = api_key_create(account=user.accounts.first(), holder=user, name="http",
                            tool="bench-http")
    began = time.perf_counter()
    load(principal, args.facts)
    print(f"loaded {args.facts} facts in {time.perf_counter() - began:.0f}s", file=sys.stderr)
    connections.close_all()

    from tests.harness import free_port

    port = free_port()
    env = {**os.environ, "ECHO_MEMORY_HOME": str(home), "ECHO_MEMORY_INDEXING": "manual",
           "ECHO_MEMORY_RATE_LIMIT_PER_MINUTE": "1000000"}
    server = subprocess.Popen([ECHO_MEMORY, "serve", "--port", str(port), "--threads", "8"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
            d = direct(principal, tool, args.calls)
            one = over_http(endpoint, key, tool, args.calls, 1)
            many = over_http(endpoint, key, tool, args.calls, args.clients)
            rows.append((tool, d, one, many))
    finally:
        server.terminate()
        server.wait(30)

    print(f"\nTransport overhead at {args.facts} facts ({args.calls} calls each; "
          f"{os.cpu_count()} cores; server: 1 gunicorn worker, 8 threads)\n")
    print("| tool | path | req/s | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|")
    for tool, d, one, many in rows:
        for label, result in (("direct (services)", d), ("HTTP /mcp, 1 client", one),
                              (f"HTTP /mcp, {args.clients} clients", many)):
            p50, p95 = percentiles(result["times"])
            print(f"| {tool} | {label} | {result['rps']:.0f} | {p50:.1f} | {p95:.1f} |")
    print("\n| tool | p50 HTTP/direct | req/s direct/HTTP (1 client) |")
    print("|---|---:|---:|")
    for tool, d, one, _ in rows:
        ratio = percentiles(one["times"])[0] / percentiles(d["times"])[0]
        print(f"| {tool} | {ratio:.2f}x | {d['rps'] / one['rps']:.2f}x |")


if __name__ == "__main__":
    main()
