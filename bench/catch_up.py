"""Right after a write of thousands of facts: query_memory over HTTP while the indexer
catches up, beside the same questions once it has (issue 42).

    .venv/bin/python bench/catch_up.py [--data PATH] [--limit-conversations N]
                                       [--variant LABEL[:NAME=VALUE,...]]... [--rounds N]
                                       [--json FILE]

The single box as shipped: a fresh home (embedded PostgreSQL in a temp dir), served by
`echo-memory serve` as quickstart serves it (one gunicorn worker, 8 threads), the
indexer a background thread in that web process (ECHO_MEMORY_INDEXING=thread), the real
model, no vector cache. Every call is a JSON-RPC tools/call on POST /mcp with an API key
of the account, timed at the client; this process only reads the box's waiting count
between calls.

1. Write: every LoCoMo conversation of --data into a memory of its own, one
   write_episode per session, one after another over /mcp (the protocol of
   bench/locomo.py and ../shared/data/locomo/README.md; the dev set is 2,760 facts).
2. Immediate: as soon as the last write is acknowledged, every question (categories 1-4)
   through query_memory (top_k 10), round robin across the conversations so that
   consecutive questions differ, one client, each as soon as the last is answered. Before
   each, this process reads how many facts of the box still wait for their vector.
3. The indexer's drain: seconds from the last write's acknowledgement until nothing
   waits (questions running beside it).
4. Settled: the same questions in the same order, on the same server, nothing waiting.
   Each is sent with a space after it: the server keeps the vectors of the questions it
   has embedded by their text, and so embeds each again, as the first time (the
   tokenizer drops the space: the same vector).

--variant runs more servers, each with its own overrides (bench/locomo.py's --set, or
ECHO_MEMORY_* variables), one after another on the same box, each writing the
conversations anew and asking at once (the settled run is the first's). Every server gets
the same warm-up first (a few questions on a small memory of its own, while its facts
wait and once they are settled). Printed: p50 / p95 / max latency and hybrid recall@10 of
each immediate run and of the settled run side by side (and of the immediate questions
that met facts still waiting in their memory), the drain, the load average, and the
latency by how many facts still waited in the box when the question was asked.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.engine_perf import percentile
from bench.locomo import CATEGORIES, DEFAULT_DATA, evidence_of, score, sessions
from bench.scale import Client, start_process, stop_process, wait_healthy
from bench.setup import bench_principal, fresh_instance

ECHO_MEMORY = str(Path(sys.executable).parent / "echo-memory")
WARM_MEMORY = "warm-up"
WARM_FACTS = [f"Robin on 3 May, 2023: I repaired bicycle number {i} at the shop on Elm "
              f"Street before lunch." for i in range(40)]
WARM_QUESTIONS = ["Who fixed bikes?", "Where is the repair shop?", "When did Robin work?",
                  "What did Robin do before lunch?", "Which street has the shop?"]
# Box-wide waiting facts when a question was asked: the rows of the latency breakdown.
WAITING_BANDS = ((1000, None), (100, 999), (1, 99), (0, 0))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {message}",
          file=sys.stderr, flush=True)


def box_waiting() -> int:
    """Facts of the whole box still waiting for their vector (an index-only count)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_fact WHERE embedding IS NULL")
        return cursor.fetchone()[0]


def write(client: Client, http, memory: str, sample: dict) -> tuple[dict[str, str], int]:
    """One conversation as bench/locomo.py writes it, over /mcp: fact id -> dia_id, calls."""
    conversation = sample["conversation"]
    entities = [{"name": conversation[k], "type": "person"} for k in ("speaker_a", "speaker_b")]
    dia_by_fact: dict[str, str] = {}
    calls = 0
    for index, (number, facts) in enumerate(sessions(sample)):
        _, result = client.call(http, "write_episode", {
            "scope": "shared", "memory": memory, "assume_new": index == 0,
            "session_id": f"{sample['sample_id']}/session_{number}",
            "entities": entities, "facts": facts})
        calls += 1
        for edge in result["structuredContent"]["edges_created"]:
            dia_by_fact[edge["fact_id"]] = edge["relation_type"].removeprefix("said ")
    return dia_by_fact, calls


def questions_of(samples: list[dict], dia_by_fact: dict[str, dict[str, str]],
                 prefix: str) -> list[dict]:
    """Every usable question, round robin across the conversations."""
    per: list[list[dict]] = []
    for sample in samples:
        known = set(dia_by_fact[sample["sample_id"]].values())
        per.append([{"memory": prefix + memory_name(sample), "conversation": sample["sample_id"],
                     "question": q["question"], "category": CATEGORIES[q["category"]],
                     "evidence": evidence_of(q, known)}
                    for q in sample["qa"] if q.get("category") in CATEGORIES
                    and evidence_of(q, known)])
    out = []
    for turn in range(max(map(len, per), default=0)):
        out += [questions[turn] for questions in per if turn < len(questions)]
    return out


def memory_name(sample: dict) -> str:
    return "conv-" + "".join(c if c.isalnum() else "-" for c in sample["sample_id"].lower())


def ask(client: Client, http, questions: list[dict], dia_by_fact: dict[str, dict[str, str]],
        *, until_drained_from: float | None = None, again: bool = False
        ) -> tuple[list[dict], float | None]:
    """Each question once, in order: its latency, recall@10 and what waited when asked.
    With `until_drained_from`, also the seconds from that moment to the first question
    asked with nothing waiting in the box (None if the questions ran out first). `again`:
    each question with a space after it, so that the server, which keeps the vectors of
    the questions it has embedded by their text, embeds it again (the tokenizer drops
    the space: the same vector)."""
    asked, drained = [], None
    for question in questions:
        waiting = box_waiting()
        if until_drained_from is not None and drained is None and waiting == 0:
            drained = time.perf_counter() - until_drained_from
        seconds, result = client.call(http, "query_memory", {
            "scope": "shared", "memory": question["memory"],
            "query": question["question"] + (" " if again else ""), "top_k": 10})
        reply = result["structuredContent"]
        dia = dia_by_fact[question["conversation"]]
        ranked = [dia.get(fact["fact_id"], "") for fact in reply["facts"]]
        asked.append({"seconds": seconds, "r10": score(ranked, question["evidence"])["r@10"],
                      "box_waiting": waiting, "memory_waiting": reply["facts_pending_vector"]})
    return asked, drained


def warm_up(client: Client, http, memory: str) -> None:
    """The same first calls on every server: its first queries pay for sessions, caches and
    the int8 model's first run, the bench's should not."""
    client.call(http, "write_episode", {
        "scope": "shared", "memory": memory, "assume_new": True,
        "session_id": "warm-up", "entities": [{"name": "Robin", "type": "person"},
                                              {"name": "Sam", "type": "person"}],
        "facts": [{"source": "Robin", "target": "Sam", "relation_type": f"said w{i}",
                   "fact": text, "confidence": "extracted"}
                  for i, text in enumerate(WARM_FACTS)]})
    for question in WARM_QUESTIONS:
        client.call(http, "query_memory", {"scope": "shared", "memory": memory,
                                           "query": question, "top_k": 10})
    wait_drained(120)


def wait_drained(timeout: float) -> float:
    started = time.perf_counter()
    while box_waiting():
        if time.perf_counter() - started > timeout:
            sys.exit(f"the indexer left {box_waiting()} facts waiting for {timeout:.0f} s")
        time.sleep(0.05)
    return time.perf_counter() - started


# `echo-memory serve` with a variant's overrides applied once Django is set up (in the server
# process, before gunicorn's worker forks; bench/locomo.py's --set syntax).
SERVE_WITH_OVERRIDES = """
import json, sys, django
setup, overrides = django.setup, json.loads(sys.argv[1])
def patched(*args, **kwargs):
    setup(*args, **kwargs)
    from bench.locomo import apply_overrides
    apply_overrides(overrides)
django.setup = patched
from echomem.cli import main
sys.argv = ["echo-memory", *sys.argv[2:]]
sys.exit(main())
"""


class Server:
    """`echo-memory serve` on the box, as quickstart runs it, started and stopped."""

    def __init__(self, home: Path, key: str, name: str, overrides: list[str]) -> None:
        from tests.harness import free_port

        self.port = free_port()
        # The key's rate limit (240 calls a minute by default) would pace the questions.
        env = {**os.environ, "ECHO_MEMORY_HOME": str(home), "ECHO_MEMORY_INDEXING": "thread",
               "ECHO_MEMORY_RATE_LIMIT_PER_MINUTE": "100000000"}
        for variable in ("DJANGO_SETTINGS_MODULE", "REDIS_URL", "CELERY_BROKER_URL"):
            env.pop(variable, None)
        # ECHO_MEMORY_* assignments go to the server's environment, the rest to its modules.
        variables = dict(o.split("=", 1) for o in overrides if o.startswith("ECHO_MEMORY_"))
        env.update(variables)
        overrides = [o for o in overrides if not o.startswith("ECHO_MEMORY_")]
        argv = ([sys.executable, "-c", SERVE_WITH_OVERRIDES, json.dumps(overrides)]
                if overrides else [ECHO_MEMORY])
        self.process = start_process([*argv, "serve", "--port", str(self.port), "--workers",
                                      "1", "--threads", "8"], env, f"catch-up-{name}")
        wait_healthy(self.port)
        self.client = Client(f"http://127.0.0.1:{self.port}/mcp", key)

    def stop(self) -> None:
        stop_process(self.process)


def figures(rows: list[dict]) -> dict:
    ms = [row["seconds"] * 1000 for row in rows]
    return {"n": len(rows), "waiting": sum(row["memory_waiting"] > 0 for row in rows),
            "r10": statistics.mean(row["r10"] for row in rows) if rows else 0.0,
            "p50": statistics.median(ms) if ms else 0.0,
            "p95": percentile(ms, 95) if ms else 0.0, "max": max(ms, default=0.0)}


def variants_of(specs: list[str]) -> list[tuple[str, list[str]]]:
    """'LABEL' or 'LABEL:module.NAME=VALUE,...' -> (label, overrides); none: as shipped."""
    out = []
    for spec in specs or ["as shipped"]:
        label, _, assignments = spec.partition(":")
        out.append((label, [a.strip() for a in assignments.split(",") if a.strip()]))
    return out


def catch_up(home: Path, key: str, samples: list[dict], run: dict) -> dict:
    """One variant's immediate run: a server with its overrides, a warm-up, the write of
    every conversation into memories of the run's own, the questions at once, the drain."""
    server = Server(home, key, run["name"], run["overrides"])
    try:
        with server.client.http() as http:
            warm_up(server.client, http, run["warm"])
            started = time.perf_counter()
            dia_by_fact, calls = {}, 0
            for sample in samples:
                dia_by_fact[sample["sample_id"]], made = write(
                    server.client, http, run["prefix"] + memory_name(sample), sample)
                calls += made
            written = time.perf_counter()
            questions = questions_of(samples, dia_by_fact, run["prefix"])
            log(f"{run['label']}: {sum(map(len, dia_by_fact.values()))} facts written in "
                f"{written - started:.1f} s; asking {len(questions)} questions at once")
            rows, drained = ask(server.client, http, questions, dia_by_fact,
                                until_drained_from=written)
            load = os.getloadavg()[0]
            if drained is None:
                wait_drained(run["drain_timeout"])
                drained = time.perf_counter() - written
            log(f"{run['label']}: drained {drained:.1f} s after the write")
            settled = None
            if run["settled"]:
                log("asking again, settled")
                settled, _ = ask(server.client, http, questions, dia_by_fact, again=True)
                settled = {"rows": settled, "load": os.getloadavg()[0]}
    finally:
        server.stop()
    return {"rows": rows, "drained": drained, "load": load, "settled": settled,
            "calls": calls, "write_seconds": written - started,
            "facts": sum(map(len, dia_by_fact.values()))}


def report(args, runs: list[dict]) -> None:
    first = runs[0]["result"]
    settled_rows, settled_load = first["settled"]["rows"], first["settled"]["load"]
    print(f"\nRight after a write of {first['facts']:,} facts ({len(args.samples)} LoCoMo "
          f"conversations, {first['calls']} write_episode calls over /mcp in "
          f"{first['write_seconds']:.1f} s), {len(settled_rows)} questions at once, one "
          f"client; echo-memory serve, 1 worker, 8 threads, indexer thread; "
          f"{os.cpu_count()} cores; load average at the start {args.load:.1f}\n")
    print("| run | questions | met waiting facts | recall@10 | p50 ms | p95 ms | max ms "
          "| drained s | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        rows = run["result"]["rows"]
        met = [row for row in rows if row["memory_waiting"] > 0]
        for label, part, tail in (
                (f"immediate, {run['label']}", rows,
                 f"{run['result']['drained']:.1f} | {run['result']['load']:.1f}"),
                ("  those that met waiting facts", met, " | ")):
            f = figures(part)
            print(f"| {label} | {f['n']} | {f['waiting']} | {f['r10']:.3f} | {f['p50']:.0f} "
                  f"| {f['p95']:.0f} | {f['max']:.0f} | {tail} |")
    f = figures(settled_rows)
    print(f"| settled | {f['n']} | {f['waiting']} | {f['r10']:.3f} | {f['p50']:.0f} | "
          f"{f['p95']:.0f} | {f['max']:.0f} | | {settled_load:.1f} |")
    for run in runs:
        gap = figures(run["result"]["rows"])["r10"] - f["r10"]
        print(f"\n{run['label']}: recall@10 immediate - settled {gap:+.3f}; the indexer "
              f"drained {run['result']['drained']:.1f} s after the last write was "
              "acknowledged (the questions running beside it); waiting in the box at the "
              f"first question: {run['result']['rows'][0]['box_waiting']:,} of "
              f"{run['result']['facts']:,} facts")
        print("| facts waiting in the box when asked | questions | p50 ms | p95 ms | max ms |")
        print("|---|---:|---:|---:|---:|")
        for low, high in WAITING_BANDS:
            rows = [row for row in run["result"]["rows"] if row["box_waiting"] >= low
                    and (high is None or row["box_waiting"] <= high)]
            if rows:
                band = f"{low:,} or more" if high is None else f"{low:,} to {high:,}"
                g = figures(rows)
                print(f"| {band} | {g['n']} | {g['p50']:.0f} | {g['p95']:.0f} | "
                      f"{g['max']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--variant", action="append", default=[],
                        metavar="LABEL[:module.NAME=VALUE,...]",
                        help="a server with these overrides (bench/locomo.py's --set, e.g. "
                             "search.query_turns.GIVE_WAY_SECONDS=0, or an ECHO_MEMORY_* "
                             "variable for its environment); several are run one "
                             "after another, each writing the conversations anew; default: "
                             "one, as shipped")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the variants this many times, in turn (reversed every "
                             "other round, so a change in the machine's load hits all alike)")
    parser.add_argument("--drain-timeout", type=float, default=600.0)
    parser.add_argument("--json", type=Path, help="also write every question's figures here")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)

    args.samples = json.loads(args.data.read_text())[: args.limit_conversations]
    variants = variants_of(args.variant)
    runs = []
    for round_ in range(args.rounds):
        for label, overrides in (variants if round_ % 2 == 0 else variants[::-1]):
            n = len(runs)
            runs.append({"label": label if args.rounds == 1 else f"{label} ({round_ + 1})",
                         "overrides": overrides, "name": f"run{n}", "prefix": f"r{n}-",
                         "settled": n == 0,
                         "warm": f"{WARM_MEMORY}-{n}", "drain_timeout": args.drain_timeout})
    home = fresh_instance(indexing="manual")  # this process never indexes: the server does
    from django.contrib.auth import get_user_model

    from accounts.services import api_key_create
    from memories.graph.services import memory_create

    _, account = bench_principal()
    _, key = api_key_create(account=account, holder=get_user_model().objects.get(
        username="bench"), name="http", tool="bench-http")
    for run in runs:
        for name in [run["warm"], *(run["prefix"] + memory_name(s) for s in args.samples)]:
            memory_create(account_id=account.pk, name=name)

    args.load = os.getloadavg()[0]
    for run in runs:
        log(f"{run['label']}: serving the box")
        run["result"] = catch_up(home, key, args.samples, run)
    report(args, runs)
    if args.json:
        args.json.write_text(json.dumps({
            "settled": runs[0]["result"]["settled"]["rows"],
            **{run["label"]: {k: run["result"][k] for k in ("rows", "drained", "facts")}
               for run in runs}}, indent=1))


if __name__ == "__main__":
    main()
