"""Sentence embeddings for Echo Memory, computed without torch.

The model is sentence-transformers/all-MiniLM-L6-v2, whose files travel inside this
package (``memories/embedding_model/``, put there by build_tools/echo_model_fetch.py, so
no torch and no download at run time). ``OnnxMiniLMEmbedder`` writes the BERT graph
(onnx_graph.py) with onnx.helper straight from the safetensors arrays, in memory at
start-up (no torch export, no 90 MB .onnx file to ship or cache), and runs it in ONNX
Runtime, which releases the GIL for the whole forward pass. Its vectors reproduce
sentence-transformers' to a cosine of >= 0.9999997 (tests/fixtures/minilm_reference.json).
One runtime: a numpy forward pass once kept as a fallback duplicated the graph and the
reference fixture, and onnxruntime is a pinned dependency.

``ECHO_MEMORY_EMBED_THREADS`` and ``ECHO_MEMORY_EMBED_QUERY_THREADS`` set ONNX Runtime's
threads for bulk and small calls.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memories.search import model_cache
from memories.search.model_files import _INSTALL_HINT, MODEL_DIR, EmbeddingModelNotInstalled
from memories.search.onnx_graph import _build_onnx_model
from memories.search.tokenizing import _MiniLMBase

__all__ = [
    "Embedder",
    "EmbeddingModelNotInstalled",
    "OnnxMiniLMEmbedder",
    "get_embedder",
]

THREADS_VARIABLE = "ECHO_MEMORY_EMBED_THREADS"
QUERY_THREADS_VARIABLE = "ECHO_MEMORY_EMBED_QUERY_THREADS"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit-length float32 vectors.

    A Protocol rather than an ABC so that tests can pass a tiny fake without
    inheriting from anything.
    """

    dimensions: int

    def embed(self, texts: Sequence[str], *, bulk: bool = False) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dimensions), rows L2-normalized.
        `bulk`: the indexer's work however few the texts (its short turns, query_turns.py)."""
        ...

    def embed_quick(self, texts: Sequence[str]) -> np.ndarray:
        """As `embed`, from a faster approximation of the same model: vectors a query
        ranks waiting facts by, never settled ones."""
        ...


def _threads_from_env(variable: str, default: int) -> int:
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{variable} must be a positive integer, not {raw!r}")
    return int(raw)


def _available_cpus() -> int:
    # sched_getaffinity honours taskset and cpusets; os.cpu_count() would not.
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# Calls with at most this many texts (a query, an episode's entity names) are on a
# request's critical path, beside Postgres; larger ones are the indexer's bulk work.
_SMALL_CALL = 8


class OnnxMiniLMEmbedder(_MiniLMBase):
    """all-MiniLM-L6-v2 run by ONNX Runtime from a graph built at start-up.

    Small calls run on ``query_threads`` threads (default: two, or one on a one-CPU
    box; ECHO_MEMORY_EMBED_QUERY_THREADS overrides). A query embeds while Postgres
    searches, so the second thread competes with the database; measured alone beside a
    busy core, one thread looked better (7.8 ms, p95 9.5, against 9.7 / 17), but end to
    end at 100k facts two gave query_memory p50 23 ms / p95 29 ms against 25 / 34
    (docs/benchmarks.md). Bulk calls run on ``threads`` threads (default: every
    CPU; ECHO_MEMORY_EMBED_THREADS overrides), 1.5-2x the throughput of one thread
    on 2 cores. When the two differ, the bulk session (~100 MB: onnxruntime keeps its
    own copy of the weights) is made on the first bulk call, so processes that only
    answer queries never pay for it. Threads sleep rather than spin between ops: no
    throughput lost, and the CPU is left to others.

    Thread-safe without a lock: a session may be run by several threads at once, and
    a run holds the GIL only to take its inputs and hand back its output.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        threads: int | None = None,
        query_threads: int | None = None,
    ) -> None:
        try:
            import onnx  # noqa: F401
            import onnxruntime
        except ImportError as exc:
            raise EmbeddingModelNotInstalled(
                "the embedding runtime is not installed: run "
                "`pip install onnx onnxruntime`"
            ) from exc
        super().__init__(model_dir, batch_size=batch_size, max_seq_length=max_seq_length)
        if any(n is not None and n < 1 for n in (threads, query_threads)):
            raise ValueError("threads and query_threads must be >= 1")
        self.threads = threads or _threads_from_env(THREADS_VARIABLE, _available_cpus())
        self.query_threads = query_threads or _threads_from_env(
            QUERY_THREADS_VARIABLE, min(2, _available_cpus()))
        self._ort = onnxruntime
        self._small = self._new_session(self.query_threads)
        self._bulk = self._small if self.threads == self.query_threads else None
        self._bulk_lock = threading.Lock()
        self._quick: Any = None
        self._quick_lock = threading.Lock()

    def _session_options(self, threads: int) -> Any:
        ort = self._ort
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    def _new_session(self, threads: int) -> Any:
        ort = self._ort
        model, weights = _build_onnx_model(
            self._load_weights(), heads=self._heads, layers=self._num_layers, eps=self._eps
        )
        options = self._session_options(threads)
        # ONNX Runtime copies these into the session, so the arrays are not kept: a
        # second session reloads them from disk (~0.1 s) rather than hold 90 MB forever.
        values = [ort.OrtValue.ortvalue_from_numpy(array) for array in weights.values()]
        options.add_external_initializers(list(weights), values)
        return ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def _new_quick_session(self) -> Any:
        """An int8 copy of the graph (ONNX Runtime's dynamic quantization, per-channel
        weights): 1.4x to 2.2x faster than float32 by the CPU (AVX2 only: 1.4x), cosine to
        its vectors 0.993 mean, 0.973 worst, on 300 LoCoMo turns with context. Good enough
        to rank a query's waiting candidates by until the indexer stores their settled
        (float32) vectors; never a settled vector itself (docs/engine.md, "Read-your-writes")."""
        session = self._ort.InferenceSession(
            str(int8_model(self)), self._session_options(self.query_threads),
            providers=["CPUExecutionProvider"])
        return session

    def write_int8_model(self, target: Path) -> None:
        """Quantize this model's graph into `target` (about 6 s on two cores)."""
        import tempfile

        import onnx
        from onnx import numpy_helper
        from onnxruntime.quantization import QuantType, quantize_dynamic

        model, weights = _build_onnx_model(
            self._load_weights(), heads=self._heads, layers=self._num_layers, eps=self._eps
        )
        # The quantizer reads weights from the model itself, not from external data.
        for tensor in model.graph.initializer:
            if tensor.name in weights:
                tensor.CopyFrom(numpy_helper.from_array(weights[tensor.name], tensor.name))
        del weights
        quantizer_code = str(Path(quantize_dynamic.__code__.co_filename).parent)

        def not_the_quantizer(record: logging.LogRecord) -> bool:
            # It logs its progress (and a pre-processing hint meant for exported models)
            # on the root logger; that is not the server's log.
            return not record.pathname.startswith(quantizer_code)

        with tempfile.TemporaryDirectory(dir=target.parent) as folder:
            source = Path(folder, "float32.onnx")
            onnx.save(model, source)
            del model
            logging.getLogger().addFilter(not_the_quantizer)
            try:
                quantize_dynamic(source, target, per_channel=True, weight_type=QuantType.QInt8)
            finally:
                logging.getLogger().removeFilter(not_the_quantizer)
        gc.collect()
        _return_freed_memory()

    def _quick_session(self) -> Any:
        if self._quick is None:
            with self._quick_lock:
                if self._quick is None:
                    try:
                        self._quick = self._new_quick_session()
                    except Exception:
                        # E.g. no writable cache directory: the float32 session gives
                        # the same ranking, only slower, and a query must not fail for it.
                        logging.getLogger(__name__).exception(
                            "could not build the int8 model; query_memory rescores waiting "
                            "facts with the float32 one")
                        self._quick = self._small
        return self._quick

    def warm_quick(self) -> None:
        """Load the int8 session now (building its file first if this machine has none),
        so no query pays for it."""
        self._quick_session()

    def embed_quick(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors from the int8 graph: provisional, to rank waiting facts by."""
        out, batches = self._batches(texts)
        session = self._quick_session()
        for rows, input_ids, mask in batches:
            feed = {"input_ids": input_ids, "attention_mask": mask}
            out[rows] = session.run(["embedding"], feed)[0]
        return out

    def _bulk_session(self) -> Any:
        if self._bulk is None:
            with self._bulk_lock:
                if self._bulk is None:
                    self._bulk = self._new_session(self.threads)
        return self._bulk

    def embed(self, texts: Sequence[str], *, bulk: bool = False) -> np.ndarray:
        out, batches = self._batches(texts)
        session = self._small if len(out) <= _SMALL_CALL and not bulk else self._bulk_session()
        for rows, input_ids, mask in batches:
            feed = {"input_ids": input_ids, "attention_mask": mask}
            out[rows] = session.run(["embedding"], feed)[0]
        return out

    def embed_ids(self, input_ids: np.ndarray) -> np.ndarray:
        """Sentence vectors for rows of wordpiece ids of one length (no padding)."""
        feed = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
        return self._bulk_session().run(["embedding"], feed)[0]


def int8_model(embedder: OnnxMiniLMEmbedder | None = None) -> Path:
    """The int8 copy of the model as an ONNX file (23 MB), built once per machine into the
    user cache directory, as the first-pass table is; `echo-memory quickstart`, `serve`
    and `check`, and ./dev, build it ahead of the first query."""
    def write(target: Path) -> None:
        (embedder or OnnxMiniLMEmbedder()).write_int8_model(target)

    return model_cache.built_once("minilm_int8", ".onnx", write)


def _return_freed_memory() -> None:
    """Hand the heap that building a model freed back to the system: the int8 build peaks
    about 270 MB over the float32 model and, left to glibc's arenas, the process that
    built it would keep it (measured: +278 MB resident without this, +10 MB with it)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """Return the process-wide default embedder, loading it on first use.

    Loading reads ~90 MB of weights, so it happens once per process; the lock stops
    concurrent first requests from each loading their own copy.
    """
    global _embedder
    if _embedder is None:
        with _embedder_lock:
            if _embedder is None:
                _embedder = OnnxMiniLMEmbedder()
    return _embedder


def self_test() -> str:
    """Load the default model afresh, embed one sentence, and describe what ran.

    Used before a server says it is ready, in a child process (echomem/readiness.py):
    dropping the instance is not enough for a process that forks web workers afterwards,
    since importing ONNX Runtime already starts a thread the forked workers would lack.
    """
    embedder = OnnxMiniLMEmbedder()
    vector = embedder.embed(["Echo Memory checks that its embedding model loads."])
    if vector.shape != (1, embedder.dimensions) or not np.isfinite(vector).all() \
            or abs(float(np.linalg.norm(vector)) - 1.0) > 1e-3:
        raise EmbeddingModelNotInstalled(
            f"the embedding model under {MODEL_DIR} loads but gives wrong vectors: "
            f"{_INSTALL_HINT}")
    described = f"all-MiniLM-L6-v2, {embedder.dimensions} dimensions, on ONNX Runtime"
    del embedder
    gc.collect()
    return described
