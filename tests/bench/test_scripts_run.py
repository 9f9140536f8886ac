"""Every script under bench/ still runs, at its smallest size (issue 38).

Each script runs as docs/benchmarks.md runs it, `python bench/<name>.py`, in its own
process with its own embedded PostgreSQL (bench/setup.py's `fresh_instance`), with the
fewest sizes, queries, conversations and rounds its arguments allow, and must exit 0
and print its figures (a named line or table row, not just any output). The figures
themselves are not checked: at these sizes they mean nothing.

Scripts run here: engine_perf, metering, storage (with --backup), freshness,
first_pass (all three parts), first_pass_mixed, locomo, catch_up (LoCoMo over /mcp right
after the write and settled, two `serve` processes), runbooks_quality,
notes_quality, ranking_cv (recording, then on its recording alone), mixed_dataset, transport,
scale then scale_recall on the box scale kept, portability (LoCoMo, runbooks and histories
copied twice; two tiny scale sizes), the two dataset checks notes_dataset and
runbooks_dataset, the Python FAQ set's builder pyfaq_dataset (on two made-up pages, into a
temporary folder), audit_log, and real_corpus (build from a tiny tree in the shapes of the
installed documentation, tests/bench/data/real_corpus; then embed) then scale_real on it
(recall per class and HTTP on both servers), query_profile on the box it kept, scale_curve
growing that box (stopped by its time budget after one chunk, then resumed) and its
--calibrate.

Libraries, exercised through the scripts that import them:
- corpus.py: engine_perf, metering, first_pass
- setup.py: every script that starts a box
- fusion.py: runbooks_quality, ranking_cv
- ranking_cv_recording.py, ranking_ltr.py: ranking_cv
- notes_fusion.py: notes_quality
- scale_corpus.py, scale_load.py: scale, scale_recall, portability
- portability_scale.py: portability; portability_boxes.py (its --second-box, the long
  form run by hand: a second home and the command line) is only imported
- real_sources.py, real_text.py: real_corpus; scale_real_load.py: scale_real, scale_curve;
  real_recombined.py: scale_curve

A new bench/*.py must join one of the two lists (test_every_bench_module_is_run_or_a_library).

Inputs kept small: LoCoMo is five made-up conversations in LoCoMo's format
(tests/bench/data/locomo_tiny.json; the dev set lives outside the repository and one of
its conversations alone costs a minute), and the runbooks, Python FAQ and notes sets are
their first few records with the questions those answer (written to a temporary folder here);
the mixed set ranking_cv builds is made of those.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
LOCOMO = Path(__file__).resolve().parent / "data" / "locomo_tiny.json"
# Made-up pages in Sphinx's shape: bench/pyfaq_dataset.py builds without python3.11-doc.
PYFAQ_HTML = Path(__file__).resolve().parent / "data" / "pyfaq_html"
# A machine's tree in miniature (a few PostgreSQL and git pages, apt's package
# descriptions, one LoCoMo conversation): bench/real_corpus.py builds without the
# documentation packages.
REAL_ROOT = Path(__file__).resolve().parent / "data" / "real_corpus"
# Variables of the test process that must not reach a bench's own box.
TEST_ONLY = ("DJANGO_SETTINGS_MODULE", "ECHO_MEMORY_EMBEDDED_DATABASE_URL", "SECRET_KEY",
             "DATABASE_URL", "ECHO_MEMORY_HOME", "REDIS_URL", "CELERY_BROKER_URL")
# A Redis database of its own for bench/scale.py, which empties it (the tests use 15).
SCALE_REDIS_DB = 13

LIBRARIES = {"corpus", "setup", "fusion", "notes_fusion", "scale_corpus", "scale_load",
             "portability_scale", "portability_boxes", "ranking_cv_recording", "ranking_ltr",
             "real_text",
             "real_sources", "scale_real_load", "real_recombined"}

NUMBER = r"[\d.,]+"
# bench/scale_curve.py on the tiny corpus' kept box: two points past its 49 facts.
CURVE = ["--box", "{real_box}", "--to", "80", "120", "--chunk", "20", "--queries", "2",
         "--verify", "1", "--shared-buffers", "128MB", "--no-http"]
# Each run: one or more steps (script, arguments, lines its output must hold), in order.
# Arguments in braces are filled in by `inputs` below.
RUNS: dict[str, list[tuple[str, list[str], list[str]]]] = {
    "engine_perf": [("engine_perf", ["--sizes", "100", "--queries", "2", "--raw-sample", "20",
                                     "--writers", "1"],
                     [rf"^\s+100\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
                      rf"^indexer at 100: {NUMBER} facts/s"])],
    "metering": [("metering", ["--facts", "100", "--queries", "2", "--episodes", "1"],
                  [r"^graph: 100 facts; 2 queries and 1 episodes of 20 facts each way",
                   rf"^query_memory metered / unmetered: p50 {NUMBER}x\s+p95 {NUMBER}x$",
                   rf"^write_episode: unmetered {NUMBER} facts/s\s+metered {NUMBER} facts/s"])],
    "storage": [("storage", ["--facts", "500", "--backup"],
                 [r"^memories_fact\s+500\s",
                  rf"^backup: {NUMBER} MB .* restore into a new embedded server: {NUMBER}s$"])],
    "freshness": [("freshness", ["--episodes", "1", "--sizes", "1", "--load-fps", "20"],
                   [r"^Freshness under a steady import by another account .* drained by "
                    rf"the indexer alone in {NUMBER}s\)$",
                    rf"^\s+1\s+\d/1\s+{NUMBER}s\s+{NUMBER}s\s+{NUMBER} ms"])],
    "first_pass": [("first_pass", ["--rounds", "1", "--facts", "20", "--episodes", "1"],
                    [r"^1\. quality on runbooks \(\d+ facts, \d+ questions\)$",
                     rf"^\s+calibration fitted here .* the product uses {NUMBER}, {NUMBER}$",
                     rf"^\s+first pass off: {NUMBER} facts/s \(median {NUMBER}\)$",
                     r"^\s+query budget 0 \(first pass only\): p50 \d+ ms, p95 \d+ ms, "
                     r"target found by meaning \d/1$"])],
    "first_pass_mixed": [("first_pass_mixed", ["--data", "{locomo}"],
                          [r"^product \([\d.]+, [\d.]+\)(\s+\d\.\d{3}){5}$",
                           r"^over every pair \([\d.]+, [\d.]+\)(\s+\d\.\d{3}){5}$"])],
    "locomo": [("locomo", ["--data", "{locomo}"],
                [r"^LoCoMo retrieval: 5 conversations, 30 turns, 20 questions",
                 r"^overall\s+20(\s+\d\.\d{3}){12}$",
                 r"^overall recall@10: text \d\.\d{3}, vector \d\.\d{3}, hybrid \d\.\d{3}$"])],
    "catch_up": [("catch_up", ["--data", "{locomo}"],
                  [r"^Right after a write of 30 facts \(5 LoCoMo conversations, ",
                   r"^\| immediate, as shipped \| 20 \| \d+ \| \d\.\d{3} \| \d+ \| \d+ \| \d+ "
                   rf"\| {NUMBER} \| {NUMBER} \|$",
                   r"^\| settled \| 20 \| 0 \| \d\.\d{3} \| \d+ \| \d+ \| \d+ \| \| ",
                   r"^as shipped: recall@10 immediate - settled [+-]\d\.\d{3}; the indexer "
                   rf"drained {NUMBER} s after"])],
    "runbooks_quality": [("runbooks_quality", ["--data", "{runbooks}"],
                          [r"^Operations records: 40 facts, 20 questions;",
                           r"^overall\s+20(\s+\d\.\d{3}){12}$"])],
    "notes_quality": [("notes_quality", ["--data", "{notes}"],
                       [r"^Note search quality: 8 notes \(brewcart\), 11 questions;",
                        r"^overall\s+11(\s+\d\.\d{3}){12}$",
                        r"^overall recall@5: text \d\.\d{3}, vector \d\.\d{3}, hybrid \d\.\d{3}"])],
    # Then again on the recording alone, for two of its sets (no box, the scores cached).
    "ranking_cv": [("ranking_cv", ["--record", "--data", "{locomo}", "--runbooks", "{runbooks}",
                                   "--pyfaq", "{pyfaq}", "--vary", "RRF_K", "--processes", "2"],
                    [r"^recorded now: locomo, runbooks, pyfaq, mixed$",
                     r"^questions: 20 LoCoMo in 5 conversations, 20 runbooks, 5 pyfaq, "
                     r"25 mixed; 4 settings$",
                     r"^chosen on all five folds: k=",
                     r"^\s+runbooks\s+text \d\.\d{3}\s+vector \d\.\d{3}\s+hybrid: shipped",
                     # The per-kind report: n, then text, vector, rrf, rrf-cv, shipped,
                     # held-out, nested, in-sample.
                     r"^single-hop\s+\d+(\s+\d\.\d{3}){8}$",
                     r"^paraphrase\s+\d+(\s+\d\.\d{3}){8}$",
                     r"^general\s+5(\s+\d\.\d{3}){8}$",
                     r"^\s+held-out - rrf, paired: [+-]\d\.\d{3} \+/- \d\.\d{3}$",
                     r"^\s+nested - rrf, paired: [+-]\d\.\d{3} \+/- \d\.\d{3}$",
                     r"^nested, the form chosen among FORMS per fold .*: \d\.\d{3}"
                     r"( / \d\.\d{3}){3}$",
                     r"^\s+'fused': \([+-]\d+\.\d{3}, [+-]\d+\.\d{3}\),$"]),
                   ("ranking_cv", ["--data", "{locomo}", "--pyfaq", "{pyfaq}", "--vary", "RRF_K",
                                   "--sets", "locomo", "pyfaq", "--tried"],
                    [r"^from the recording: locomo, pyfaq$",
                     r"^questions: 20 LoCoMo in 5 conversations, 5 pyfaq; 4 settings$",
                     r"^general\s+5(\s+\d\.\d{3}){8}$",
                     r"^nested, the form chosen among FORMS and TRIED per fold .*: "
                     r"\d\.\d{3} / \d\.\d{3}$"])],
    "mixed_dataset": [("mixed_dataset", ["--runbooks", "{runbooks}", "--pyfaq", "{pyfaq}",
                                         "--locomo", "{locomo}", "--out", "{mixed_out}"],
                       [r": 5 memories of \d+-\d+ facts \(\d+\), \d+ episodes, 25 questions "
                        r"\(0 locomo, 20 runbooks, 5 pyfaq\)$"])],
    "transport": [("transport", ["--facts", "500", "--calls", "2", "--clients", "1"],
                   [rf"^\| query_memory \| HTTP /mcp, 1 client \| \d+ \| {NUMBER} \| {NUMBER} \|$",
                    rf"^\| write_episode \| direct \(services\) \| \d+ \| {NUMBER} \| {NUMBER} \|$",
                    r"^\| whole request: ping over /mcp .* \| \d+ \|$"])],
    "scale": [("scale", ["--facts", "1000", "--real", "100", "--people", "20", "--queries", "2",
                         "--write-seconds", "1", "--writers", "1", "--drain-seconds", "1",
                         "--ef-search", "64", "--explain", "0", "--shared-buffers", "128MB",
                         "--redis", "{redis}", "--keep", "{box}"],
               [rf"^\| HTTP /mcp \(server embeds the question\) \| {NUMBER} \| "
                rf"\*\*{NUMBER}\*\* \|$",
                r"^\| 64( \(service\))? \| \d\.\d{3} \| \d+ \|",
                rf"^\| 1 \| {NUMBER} \| {NUMBER} \| {NUMBER} \|"]),
              ("scale_recall", ["{box}", "--questions", "2", "--people", "20", "--real", "100"],
               [r"^2 questions, ef_search 64: recall@10 \d\.\d{3};"])],
    "portability": [("portability", ["--data", "{locomo}", "--runbooks", "{runbooks}",
                                     "--history-people", "3", "--sizes", "100", "200",
                                     "--people", "20", "--systems", "20",
                                     "--reembed-facts", "10"],
                     [r"^with vectors \(A -> B\): identical top-10 lists \d+/\d+; "
                      r"recall@10 A \d\.\d{4}, B \d\.\d{4}$",
                      r"^re-embedded \(A -> C\): .*, difference [+-]\d\.\d{4}$",
                      r"^history A vs B: \d+ facts compared, \d+ differ; ",
                      r"^second import of the same files into B: rows before ",
                      r"^the importer reported: created \d+; already present ",
                      rf"^\| 200 \| export with vectors \| {NUMBER} \| {NUMBER} \| "
                      rf"{NUMBER} \| {NUMBER} \| {NUMBER} \|$",
                      r"^export peak memory by size \(with vectors\): 100 facts ",
                      r"^re-embedding after an import without vectors "])],
    "notes_dataset": [("notes_dataset", [],
                       [r"^\d+ notes \(brewcart, tidewatch\), \d+ questions$",
                        r"^questions sharing no content word with their evidence: "])],
    "runbooks_dataset": [("runbooks_dataset", [],
                          [r"^\d+ episodes, \d+ facts, \d+ questions$",
                           r"^questions sharing no content word with their evidence: "])],
    "pyfaq_dataset": [("pyfaq_dataset", ["--html", "{pyfaq_html}", "--pages", "programming",
                                         "design", "--out", "{pyfaq_out}"],
                       [r"^5 episodes \(4 FAQ entries\), 11 facts, 4 questions -> ",
                        r"^programming\s+6\s+1\s+2\s+3\s+7\s",
                        r"^questions sharing no content word with their evidence: "])],
    # The corpus from the tiny tree (49 facts in four memories), its vectors, then the
    # measurement on all of it: recall per class and HTTP on both servers. Then the curve
    # on the box it kept, after query_profile there: to 80 and 120 facts in chunks of 20,
    # the first run out of time
    # after one chunk (69 facts), the second resuming it (the box then holds exactly 120,
    # so nothing was written twice); recall alone at two ef_search values on the grown
    # box; and the stand-ins' calibration on 10 facts.
    "scale_real": [("real_corpus", ["build", "--root", "{real_root}"],
                    [r"^49 facts, 4 memories; sentences by source: git 11, packages 8, "
                     r"postgres 18$",
                     r"^  big: 18 at 1M, 18 at 100k, 3 questions$"]),
                   # The first 20 by the int8 copy, the rest by the product's model.
                   ("real_corpus", ["embed", "--upto", "20", "--model", "int8"],
                    [r"^20 rows have vectors: \d+ texts embedded now, "]),
                   ("real_corpus", ["embed"],
                    [r"^49 rows have vectors: \d+ texts embedded now, "]),
                   ("scale_real", ["--facts", "49", "--queries", "2", "--ef-search", "128",
                                   "--verify", "1", "--shared-buffers", "128MB",
                                   "--web-workers", "1", "--keep", "{real_box}"],
                    [r"^Scale on real sentences: 49 facts ",
                     r"^\| memories_fact \| table \(heap \+ TOAST\) \| 49 \| ",
                     r"^\| unfiltered: big, 18 facts \| relaxed \| 20,000 \| 128 \(service\) "
                     r"\| \d\.\d{3} \| \d\.\d{3} \| \d+ \| ",
                     r"^\| small: locomo-conv-tiny, 12 \(exact in the product\) \| relaxed \| ",
                     rf"^\| unfiltered: big, 18 facts \| 2 \| {NUMBER} / \*\*{NUMBER}\*\* \| "
                     rf"{NUMBER} / {NUMBER} \|$"]),
                   # Where a question's time goes, on the box just measured.
                   ("query_profile", ["--box", "{real_box}", "--queries", "2", "--warm", "1",
                                      "--shared-buffers", "128MB"],
                    [r"^Where a query's time goes: 49 facts, ",
                     r"^unfiltered: big, 18 facts: 2 questions, p50 / p95 ms$",
                     rf"^    vector search +{NUMBER} / +{NUMBER}  \(1 a call\)$",
                     rf"^    word search +{NUMBER} / +{NUMBER}  \(1 a call\)$",
                     rf"^  model runs \(beside the statements\) +{NUMBER} / +{NUMBER}  ",
                     rf"^  the model alone, one question +{NUMBER} / +{NUMBER}$"]),
                   ("scale_curve", [*CURVE, "--budget-minutes", "0"],
                    [r"^\| 49 \(start\) \| - \| - \| - \| ",
                     r"^the box holds 69 facts, ids 1-69 without a gap$",
                     r"^Stopped after 0 minutes \(69 facts in the box, growing to 80\)\. Run "
                     r"the same command again"]),
                   ("scale_curve", CURVE,
                    [rf"^\| 80 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| 4096MB \| .* \| "
                     r"\d\.\d{3} \| \d\.\d{3} \| - \| - \|$",
                     rf"^\| 120 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| 4096MB \| ",
                     r"^  HNSW build, power law N\^-?[\d.]+: ",
                     r"^the box holds 120 facts, ids 1-120 without a gap$"]),
                   ("scale_curve", ["--box", "{real_box}", "--recall-ef", "40", "128",
                                    "--queries", "2", "--verify", "1",
                                    "--shared-buffers", "128MB"],
                    [r"^recall@10 at 120 facts ",
                     r"^\| unfiltered: big, [\d,]+ facts \| 40 \| \d\.\d{3} \| \d\.\d{3} \| ",
                     r"^\| unfiltered: big, [\d,]+ facts \| 128 \| \d\.\d{3} \| "]),
                   ("scale_curve", ["--calibrate", "10"],
                    [r"^stand-in against the model, 10 recombined facts: cosine mean "
                     r"\d\.\d{3}, p5 \d\.\d{3}"])],
    "audit_log": [("audit_log", ["--events", "2000", "--repeats", "1", "--writes", "20",
                                 "--write-rounds", "1", "--episodes", "5"],
                   [rf"^seeded 2,000 events in {NUMBER}s$",
                    rf"^record\(\), one event per transaction, .* \({NUMBER}x\)$",
                    rf"^write_episode, two facts per call, .* \({NUMBER}x\)$",
                    r"^\| owner \| key \| [\d,]+ \| \d+ / \*\*\d+\*\* \| ",
                    r"^\| member \| account-level \| "])],
}


def test_every_bench_module_is_run_or_a_library():
    modules = {path.stem for path in BENCH.glob("*.py")} - {"__init__"}
    run = {script for steps in RUNS.values() for script, _, _ in steps}
    assert modules - run - LIBRARIES == set(), "a bench script nobody runs: add it to RUNS"
    assert (run | LIBRARIES) - modules == set(), "listed, but not under bench/"
    runnable = {name for name in modules
                if 'if __name__ == "__main__":' in (BENCH / f"{name}.py").read_text()}
    assert runnable == run, "a library with a __main__ is a script: run it"


def first_records(source: Path, target: Path, count: int, *, records: str, items: str,
                  item_record: str) -> Path:
    """The first `count` records of a set (episodes or notes), what belongs to them, and
    the questions whose evidence they hold."""
    target.mkdir()

    def read(name: str) -> list[dict]:
        return [json.loads(line) for line in (source / name).read_text().splitlines() if line]

    def write(name: str, rows: list[dict]) -> None:
        (target / name).write_text("".join(json.dumps(row) + "\n" for row in rows))

    kept = read(records)[:count]
    ids = {row["id"] for row in kept}
    write(records, kept)
    if items:
        kept_items = [row for row in read(items) if row[item_record] in ids]
        write(items, kept_items)
        ids = {row["id"] for row in kept_items}
    write("questions.jsonl", [q for q in read("questions.jsonl") if set(q["evidence"]) <= ids])
    return target


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp("bench-inputs")
    runbooks = first_records(BENCH / "data" / "runbooks", folder / "runbooks", 5,
                             records="episodes.jsonl", items="facts.jsonl",
                             item_record="episode")
    pyfaq = first_records(BENCH / "data" / "pyfaq", folder / "pyfaq-set", 5,
                          records="episodes.jsonl", items="facts.jsonl", item_record="episode")
    notes = first_records(BENCH / "data" / "notes", folder / "notes", 8,
                          records="notes.jsonl", items="", item_record="")
    redis = urlsplit(os.environ["REDIS_URL"])  # the tests' Redis (tests/harness.py)
    # Not under pytest's folder: the embedded server runs as another user, who may not
    # enter it; bench/scale.py keeps its box here for bench/scale_recall.py.
    box = tempfile.mkdtemp(prefix="echo-bench-scale-")
    real_box = tempfile.mkdtemp(prefix="echo-bench-real-")
    yield {"locomo": str(LOCOMO), "runbooks": str(runbooks), "pyfaq": str(pyfaq),
           "notes": str(notes),
           "pyfaq_html": str(PYFAQ_HTML), "pyfaq_out": str(folder / "pyfaq"),
           "mixed_out": str(folder / "mixed"),
           "real_root": str(REAL_ROOT), "real_box": real_box,
           "redis": urlunsplit(redis._replace(path=f"/{SCALE_REDIS_DB}")), "box": box}
    shutil.rmtree(box, ignore_errors=True)
    shutil.rmtree(real_box, ignore_errors=True)


@pytest.fixture(scope="module")
def bench_env(tmp_path_factory) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY}
    # The vectors a script computes serve the next one here, and never a developer's cache.
    env["ECHO_BENCH_CACHE"] = str(tmp_path_factory.mktemp("bench-cache"))
    # The server and worker processes some scripts start import this checkout too.
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.parametrize("run", RUNS)
def test_script_runs_at_its_smallest_size(run, inputs, bench_env):
    for script, arguments, lines in RUNS[run]:
        argv = [sys.executable, str(BENCH / f"{script}.py"),
                *(argument.format(**inputs) for argument in arguments)]
        done = subprocess.run(argv, env=bench_env, cwd=ROOT, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stderr[-4000:]}"
        for line in lines:
            assert re.search(line, done.stdout, re.M), (
                f"{script} did not print a line matching {line!r}:\n{done.stdout[-4000:]}")
