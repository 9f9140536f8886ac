"""Export and import at scale for bench/portability.py: facts/s each way, peak memory, file size.

A source memory of N synthetic facts is loaded the fast way (bench/scale_load.py's COPY:
the rows the write path would store, minus audit events) with scale_corpus's sentences,
then exported to a file and imported into another account's fresh memory, with vectors and
without. Vectors here are random unit vectors (seeded): what they mean does not matter to
the format's speed, and the model is not paid for 100k sentences; the one step that needs
the model, re-embedding an import without vectors, is timed on its own (the indexer, on a
limited number of the imported facts).

Peak memory is this process's resident set: sampled every few milliseconds in a thread
while a step runs, minus what it held when the step began (after a garbage collection and
glibc's malloc_trim, so memory freed by the step before is not counted as held). The
database server is another process: its memory is not in the figure.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench import scale_corpus, scale_load
from bench.setup import bench_principal

SOURCE = "bulk-{size}"
SAMPLE_SECONDS = 0.005


class PeakMemory:
    """Resident-set growth over a block: `with PeakMemory() as peak: ...; peak.growth`."""

    def __init__(self) -> None:
        import psutil

        self.process = psutil.Process()
        self.baseline = self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> PeakMemory:
        gc.collect()
        _trim()
        self.baseline = self.peak = self.process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def growth(self) -> int:
        return self.peak - self.baseline


def _trim() -> None:
    """Hand freed heap back to the system (glibc only), so a step starts from what it holds."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@dataclass
class Step:
    name: str
    facts: int
    seconds: float
    peak: int
    file_bytes: int = 0
    load: float = field(default_factory=lambda: os.getloadavg()[0])

    @property
    def rate(self) -> float:
        return self.facts / self.seconds if self.seconds else 0.0


def vocabulary_of(people: int, systems: int | None) -> scale_corpus.Vocabulary:
    """scale_corpus's names: `people` people and the first `systems` systems (all: None)."""
    vocabulary = scale_corpus.Vocabulary(people)
    if systems is not None:
        dropped = set(vocabulary.systems[systems:])
        vocabulary.systems = vocabulary.systems[:systems]
        vocabulary.entities = {name: kind for name, kind in vocabulary.entities.items()
                               if name not in dropped}
    return vocabulary


def load_source(principal, account, size: int, *, vocabulary: scale_corpus.Vocabulary,
                real: int) -> None:
    """A memory of `size` facts in the source account, indexes rebuilt after the copy."""
    from memories.graph.services import memory_create

    memory = memory_create(account_id=account.pk, name=SOURCE.format(size=size))
    sentences = scale_corpus.real_facts(min(real, size), vocabulary)
    rng = np.random.default_rng(41)
    vectors = _unit(rng.normal(size=(len(sentences), 384)))
    names = _unit(rng.normal(size=(len(vocabulary.entities), 384)))
    started = time.perf_counter()
    scale_load.load(memory_id=memory.pk, holder_id=principal.holder_id,
                    key_id=principal.key_id, facts=size, real=vectors,
                    real_facts=sentences, vocabulary=vocabulary, entity_vectors=names)
    print(f"  loaded {size} facts in {time.perf_counter() - started:.0f}s", file=sys.stderr)


def _unit(values: np.ndarray) -> np.ndarray:
    return (values / np.linalg.norm(values, axis=1, keepdims=True)).astype(np.float32)


def export_to(principal, memory: str, path: Path, *, vectors: bool, facts: int) -> Step:
    from memories.portability.export import export_memory

    with PeakMemory() as peak:
        started = time.perf_counter()
        with path.open("w", encoding="utf-8") as out:
            out.writelines(export_memory(principal=principal, memory=memory,
                                         include_vectors=vectors))
        seconds = time.perf_counter() - started
    return Step(f"export {'with' if vectors else 'without'} vectors", facts, seconds,
                peak.growth, path.stat().st_size)


def import_from(principal, account, memory: str, path: Path, *, facts: int):
    """Import `path` into a new memory `memory` of `account`: (Step, the importer's report)."""
    from memories.graph.services import memory_create
    from memories.portability.import_ import import_memory
    from memories.portability.reading import bounded_lines

    memory_create(account_id=account.pk, name=memory)
    with PeakMemory() as peak, path.open("rb") as stream:
        started = time.perf_counter()
        report = import_memory(principal=principal, memory=memory,
                               lines=bounded_lines(stream))
        seconds = time.perf_counter() - started
    created = report.counts["fact"].created
    if created != facts:
        sys.exit(f"import into {memory}: {created} facts created, {facts} expected")
    return Step("import", facts, seconds, peak.growth), report


def reembed(limit: int) -> tuple[int, float]:
    """The indexer on up to `limit` waiting facts, with the model itself: (facts, seconds)."""
    from memories.search import embeddings
    from memories.search.indexing import index_pending

    held = embeddings._embedder
    embeddings._embedder = getattr(held, "inner", held)
    try:
        started = time.perf_counter()
        done = index_pending(limit=limit)
        return done, time.perf_counter() - started
    finally:
        embeddings._embedder = held


def run(sizes: list[int], folder: Path, *, people: int, real: int, systems: int | None = None,
        reembed_facts: int, import_sizes: list[int] | None = None) -> None:
    """Each size exported both ways; imported too where `import_sizes` (default all) says."""
    from memories.search.embeddings import get_embedder

    get_embedder().embed(["warm"])  # the model's own load is not an import's peak memory
    vocabulary = vocabulary_of(people, systems)
    source, source_account = bench_principal("scale-source")
    target, target_account = bench_principal("scale-target")
    rows: list[tuple[int, Step]] = []
    reembedded = None
    print(HEADER, flush=True)
    for size in sizes:
        load_source(source, source_account, size, vocabulary=vocabulary, real=real)
        memory = SOURCE.format(size=size)
        for vectors in (True, False):
            path = folder / f"{memory}-{'vectors' if vectors else 'plain'}.jsonl"
            out = export_to(source, memory, path, vectors=vectors, facts=size)
            rows.append((size, out))
            print(_row(size, out), flush=True)
            if import_sizes is not None and size not in import_sizes:
                path.unlink()
                continue
            into, report = import_from(target, target_account,
                                       f"{memory}-{'vectors' if vectors else 'plain'}", path,
                                       facts=size)
            into.name = ("import with vectors (stored as given)" if vectors else
                         "import without vectors (stored; the indexer embeds after)")
            rows.append((size, into))
            print(_row(size, into), flush=True)
            print(f"  {size}: {out.name} {out.seconds:.1f}s, {into.name} {into.seconds:.1f}s "
                  f"({report.vectors})", file=sys.stderr)
            path.unlink()
        if reembedded is None and reembed_facts:
            reembedded = (size, *reembed(reembed_facts))
    report_scale(rows, reembedded)


HEADER = ("\n(each step as it ends)\n| facts | step | seconds | facts/s | peak memory, MB | "
          "file, MB | load |")


def _row(size: int, step: Step) -> str:
    file_mb = f"{step.file_bytes / 2**20:.1f}" if step.file_bytes else ""
    return (f"| {size} | {step.name} | {step.seconds:.1f} | {step.rate:,.0f} | "
            f"{step.peak / 2**20:.1f} | {file_mb} | {step.load:.1f} |")


def report_scale(rows: list[tuple[int, Step]], reembedded) -> None:
    print("\nExport and import at scale (peak = resident-set growth of the process over the "
          "step; load = the 1-minute load average when the step ended):")
    print("| facts | step | seconds | facts/s | peak memory, MB | file, MB | load |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for size, step in rows:
        print(_row(size, step))
    exports = [(size, step) for size, step in rows if step.name == "export with vectors"]
    if len(exports) > 1:
        print("export peak memory by size (with vectors): " + ", ".join(
            f"{size} facts {step.peak / 2**20:.1f} MB" for size, step in exports))
    if reembedded:
        size, done, seconds = reembedded
        print(f"re-embedding after an import without vectors ({size} facts imported): the "
              f"indexer embedded {done} facts in {seconds:.1f}s, "
              f"{done / seconds if seconds else 0:,.0f} facts/s")
