"""Where a query's time goes: query_memory in this process on a box scale_real.py kept,
each stage timed, per class of memory.

    .venv/bin/python bench/query_profile.py --box /work/echo-real-1m [--queries 100]

Not part of CI's figures (tests/bench runs it on the tiny corpus's box to keep it
working). For each class scale_real.py measures (the big memory, every memory of 10k
facts or more, the largest small one; those with questions), --warm questions of every
class first (the last of each memory's), then --queries others (none asked twice, so each
is embedded here), each called as the HTTP door calls it: the key checked
(accounts.principal.principal_from_key), then tools.calling.call_tool, one at a time.
Printed per class, p50 / p95 ms a question:

- the call, whole (key and tool; no HTTP: --http times that);
- the SQL statements, each kind (what it reads or writes) and all of them, with how
  many a call makes;
- the question's embeddings: each model run (in the embedding threads, beside the
  statements) and how long the call waited for them after its statements;
- the rest: the call less its statements and that wait (validation, fusion, reply).

Then the model alone on the same questions, one at a time with nothing beside it, so a
stage's cost can be told from what the cores beside it did. With --http, then other
questions of each class over HTTP as scale_real.py asks them (echo-memory serve on the
box, one client). To compare two versions of the product on one box, run each one's
checkout of this script (the server it starts imports the checkout it is run from).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import real_corpus
from bench.engine_perf import percentile
from bench.scale import log, restart_with, stop_box
from bench.scale_real import classes_of, latency, run_key
from bench.setup import fresh_instance

# What a statement does, by the first pattern its SQL matches (else its verb and table).
KINDS = (
    ("vector search", re.compile(r"<=>")),
    ("word statistics", re.compile(r"memories_termstat")),
    ("fact views", re.compile(r"JOIN memories_entity s ON s.id = f.source_id")),
    ("partition counts", re.compile(r"FROM memories_corpusstat WHERE")),
    ("word search", re.compile(r"ts_rank|@@|WITH mine AS")),
    ("entities named", re.compile(r"FROM memories_entity WHERE memory_id")),
    ("transaction", re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)", re.I)),
    ("settings", re.compile(r"^\s*SET\b", re.I)),
)
_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+\"?(\w+)", re.I)


def kind_of(sql: str) -> str:
    if " + " in sql and "SELECT" not in sql:  # statements sent together, already named
        return sql
    for kind, pattern in KINDS:
        if pattern.search(sql):
            return kind
    verb = sql.split(None, 1)[0].upper() if sql.strip() else "?"
    table = _TABLE.search(sql)
    return f"{verb} {table.group(1) if table else '?'}"


class Stages:
    """The current call's timings: statements by kind, model runs, waits."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.current: dict | None = None

    def begin(self) -> None:
        self.current = {"sql": defaultdict(float), "count": defaultdict(int),
                        "model": [], "wait": 0.0}

    def end(self, seconds: float) -> None:
        self.current["total"] = seconds
        self.calls.append(self.current)
        self.current = None

    def statement(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if self.current is not None:
                kind = kind_of(sql)
                self.current["sql"][kind] += time.perf_counter() - started
                self.current["count"][kind] += 1


@contextmanager
def timed_embeddings(stages: Stages):
    """The query's embeddings timed where they run (the embedding pool) and where the
    call waits for them: whatever query_memory submits to the pool is wrapped."""
    from memories.graph import selectors

    pool = selectors._EMBEDDING_POOL

    class Waited:
        def __init__(self, future):
            self.future = future

        def result(self):
            started = time.perf_counter()
            try:
                return self.future.result()
            finally:
                if stages.current is not None:
                    stages.current["wait"] += time.perf_counter() - started

    class Timed:
        def submit(self, function, *args):
            calls = stages.current

            def run():
                started = time.perf_counter()
                try:
                    return function(*args)
                finally:
                    if calls is not None:
                        calls["model"].append(time.perf_counter() - started)

            return Waited(pool.submit(run))

    selectors._EMBEDDING_POOL = Timed()
    try:
        yield
    finally:
        selectors._EMBEDDING_POOL = pool


def ms(values: list[float]) -> str:
    if not values:
        return f"{'-':>6} / {'-':>6}"
    values = [v * 1000 for v in values]
    return f"{statistics.median(values):6.1f} / {percentile(values, 95):6.1f}"


def profile(plaintext: str, memory: str, questions: list[str], stages: Stages) -> None:
    from django.db import connection

    from echomem import bulk
    from tools.registry import TOOLS

    tool = TOOLS["query_memory"]
    direct, together = bulk.execute, bulk.execute_all

    # bulk's statements bypass Django's cursor and its wrappers. Statements sent together
    # are one wait, timed as one kind ("a + b + c").
    def execute(sql, params):
        return stages.statement(lambda *_: direct(sql, params), sql, params, False, None)

    def execute_all(statements):
        sql = " + ".join(kind_of(statement.sql) for statement in statements)
        return stages.statement(lambda *_: together(statements), sql, None, False, None)

    bulk.execute, bulk.execute_all = execute, execute_all
    try:
        with connection.execute_wrapper(stages.statement):
            _ask(plaintext, memory, questions, stages, tool)
    finally:
        bulk.execute, bulk.execute_all = direct, together


def _ask(plaintext, memory, questions, stages, tool) -> None:
    from accounts.principal import principal_from_key
    from tools.calling import call_tool

    for question in questions:
        arguments = {"scope": "shared", "memory": memory, "query": question, "top_k": 10}
        stages.begin()
        started = time.perf_counter()
        call_tool(principal_from_key(plaintext), tool, arguments)
        stages.end(time.perf_counter() - started)


def report(label: str, calls: list[dict], alone: list[float]) -> None:
    print(f"\n{label}: {len(calls)} questions, p50 / p95 ms")
    print(f"  {'the call, whole':<34} {ms([c['total'] for c in calls])}")
    kinds = sorted({k for c in calls for k in c["sql"]},
                   key=lambda k: -sum(c["sql"].get(k, 0) for c in calls))
    for kind in kinds:
        count = statistics.median(c["count"].get(kind, 0) for c in calls)
        print(f"    {kind:<32} {ms([c['sql'].get(kind, 0.0) for c in calls])}  "
              f"({count:g} a call)" if len(kind) <= 32 else
              f"    {kind}\n    {'':<32} {ms([c['sql'].get(kind, 0.0) for c in calls])}  "
              f"({count:g} a call)")
    sql = [sum(c["sql"].values()) for c in calls]
    print(f"  {'statements, all':<34} {ms(sql)}  "
          f"({statistics.median(sum(c['count'].values()) for c in calls):g} a call)")
    runs = [run for c in calls for run in c["model"]]
    print(f"  {'model runs (beside the statements)':<34} {ms(runs)}  "
          f"({len(runs) / len(calls):.2f} a call)")
    print(f"  {'waited for the embeddings':<34} {ms([c['wait'] for c in calls])}")
    print(f"  {'the rest':<34} "
          f"{ms([c['total'] - s - c['wait'] for c, s in zip(calls, sql, strict=True)])}")
    print(f"  {'the model alone, one question':<34} {ms(alone)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--box", required=True, help="a box kept by scale_real.py --keep")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--warm", type=int, default=100,
                        help="questions per class asked first, every class before any is timed")
    parser.add_argument("--shared-buffers", default="4GB")
    parser.add_argument("--http", action="store_true",
                        help="then query_memory over HTTP per class, as scale_real.py times "
                             "it (echo-memory serve on the box, one client, other questions)")
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args()
    home = Path(args.box)
    fresh_instance(indexing="manual", keep=str(home))
    try:
        restart_with(home, args.shared_buffers)
        run(args, home)
    finally:
        stop_box(home)


def run(args, home: Path) -> None:
    from django.db.models import Count

    from accounts.models import Account
    from memories.models import Fact, Memory
    from memories.search.embeddings import get_embedder

    # The classes by what the box holds (a box scale_curve.py grew is not the corpus' prefix).
    sizes = dict(Fact.objects.values_list("memory__name").annotate(n=Count("id")))
    held = sum(sizes.values())
    asked = real_corpus.questions()
    measured = [(label, name) for label, name in
                classes_of(sizes, dict(Memory.objects.values_list("name", "pk")))
                if asked.get(name)]
    plaintext = run_key(Account.objects.get(name="bench account"))
    # The warm-up questions are the last of each memory's (timed: the first), so the
    # caches a server keeps warm are warm here too, without the timed questions' own pages.
    plan = {}
    for _, name in measured:
        questions = asked[name]
        warm = min(args.warm, max(0, len(questions) - args.queries))
        plan[name] = (questions[len(questions) - warm:], questions[:len(questions) - warm]
                      [:args.queries])
    with timed_embeddings(Stages()):
        for name, (warm, _) in plan.items():
            profile(plaintext, name, warm, Stages())
    print(f"Where a query's time goes: {held:,} facts, load average "
          f"{os.getloadavg()[0]:.1f}")
    for label, name in measured:
        timed = plan[name][1]
        stages = Stages()
        with timed_embeddings(stages):
            profile(plaintext, name, timed, stages)
        embedder = get_embedder()
        alone = []
        for question in timed:
            started = time.perf_counter()
            embedder.embed([question])
            alone.append(time.perf_counter() - started)
        log(f"{name}: {len(timed)} questions profiled")
        report(label, stages.calls, alone)
    if args.http:
        over_http = latency(args, home, plaintext, measured, modes=("service",))
        print("\nover HTTP, p50 / p95 ms a question:")
        for label, _ in measured:
            p50, p95 = over_http[label]["service"]
            print(f"  {label}: {p50:.1f} / {p95:.1f} ({over_http[label]['questions']} questions)")


if __name__ == "__main__":
    main()
