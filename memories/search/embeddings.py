"""Sentence embeddings for Echo Memory, computed without torch.

The model is sentence-transformers/all-MiniLM-L6-v2, whose files travel inside this
package (``memories/embedding_model/``, put there by build_tools/echo_model_fetch.py, so
no torch and no download at run time). ``OnnxMiniLMEmbedder`` writes the BERT graph with
onnx.helper straight from the safetensors arrays, in memory at start-up (no torch export,
no 90 MB .onnx file to ship or cache), and runs it in ONNX Runtime, which releases the
GIL for the whole forward pass. Its vectors reproduce sentence-transformers' to a cosine
of >= 0.9999997 (tests/fixtures/minilm_reference.json). One runtime: a numpy forward pass
once kept as a fallback duplicated the graph and the reference fixture, and onnxruntime is
a pinned dependency.

``ECHO_MEMORY_EMBED_THREADS`` and ``ECHO_MEMORY_EMBED_QUERY_THREADS`` set ONNX Runtime's
threads for bulk and small calls.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Embedder",
    "EmbeddingModelNotInstalled",
    "OnnxMiniLMEmbedder",
    "get_embedder",
]

# A batch holds at most batch_size x this many padded tokens. Attention scores grow
# with rows x seq^2: 40 texts padded to 256 wordpieces need 126 MB of them, which
# onnxruntime's arena then keeps for good (RSS 760 MB). With the cap, long texts go
# 4 x fewer to a batch and typical ones (20-60 wordpieces) are not affected.
_TOKENS_PER_ROW = 64

# Shipped inside the package (the wheel carries it; a checkout gets it from ./dev).
# The model ships inside the app (pyproject package-data: memories/embedding_model/).
MODEL_DIR = Path(__file__).resolve().parent.parent / "embedding_model"
_INSTALL_HINT = (
    "reinstall Echo Memory from its wheel (`pip install --force-reinstall echo_mem-*.whl`), "
    "or in a checkout run `python build_tools/echo_model_fetch.py`"
)

THREADS_VARIABLE = "ECHO_MEMORY_EMBED_THREADS"
QUERY_THREADS_VARIABLE = "ECHO_MEMORY_EMBED_QUERY_THREADS"


class EmbeddingModelNotInstalled(RuntimeError):
    """The model files or the libraries needed to run them are missing."""


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit-length float32 vectors.

    A Protocol rather than an ABC so that tests can pass a tiny fake without
    inheriting from anything.
    """

    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dimensions), rows L2-normalized."""
        ...

    def embed_quick(self, texts: Sequence[str]) -> np.ndarray:
        """As `embed`, from a faster approximation of the same model: vectors a query
        ranks waiting facts by, never settled ones."""
        ...


def _model_dir() -> Path:
    path = MODEL_DIR
    if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
        raise EmbeddingModelNotInstalled(
            f"the embedding model is missing from {path}: {_INSTALL_HINT}"
        )
    return path


# (rows of the output, input_ids, attention_mask) for one forward pass.
_Batch = tuple[list[int], np.ndarray, np.ndarray]


class _MiniLMBase:
    """Configuration, tokenization and batching."""

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None,
        *,
        batch_size: int,
        max_seq_length: int | None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingModelNotInstalled(
                "the embedding runtime is not installed: run "
                "`pip install numpy tokenizers safetensors`"
            ) from exc

        path = Path(model_dir) if model_dir is not None else _model_dir()
        config = json.loads((path / "config.json").read_text())
        st_config = _read_json(path / "sentence_bert_config.json")
        pooling = _read_json(path / "1_Pooling" / "config.json")
        if pooling and not pooling.get("pooling_mode_mean_tokens", False):
            raise ValueError(f"{path}: only mean pooling is implemented")

        self._path = path
        self.batch_size = batch_size
        self.dimensions: int = int(config["hidden_size"])
        self.max_seq_length: int = int(
            max_seq_length or st_config.get("max_seq_length") or config["max_position_embeddings"]
        )
        self._heads = int(config["num_attention_heads"])
        self._head_dim = self.dimensions // self._heads
        self._num_layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))

        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # The packaged tokenizer.json pins truncation to 128 and pads every input
        # to 128; sentence-transformers overrides both, so must we, or long texts
        # would embed differently and short ones would cost 10x the compute.
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def _load_weights(self) -> dict[str, np.ndarray]:
        try:
            from safetensors.numpy import load_file
        except ImportError as exc:
            raise EmbeddingModelNotInstalled(
                "the embedding runtime is not installed: run `pip install safetensors`"
            ) from exc
        w = load_file(str(self._path / "model.safetensors"))
        # Some exports prefix every key with the architecture name.
        return {k.removeprefix("bert."): v for k, v in w.items()}

    def _batches(self, texts: Sequence[str]) -> tuple[np.ndarray, list[_Batch]]:
        """Tokenize, and group texts of similar length into padded int64 batches."""
        if isinstance(texts, str):
            # A bare str is a Sequence[str] of characters; embedding each letter is
            # never what the caller meant.
            raise TypeError("embed() takes a sequence of strings, not a single string")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out, []
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        ids = [e.ids for e in encodings]
        # Sorting by length keeps each batch's padding (wasted FLOPs) small, and makes
        # the text being added the longest of its batch.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        budget = self.batch_size * _TOKENS_PER_ROW
        chunks: list[list[int]] = []
        for i in order:
            rows = len(chunks[-1]) if chunks else self.batch_size
            if rows == self.batch_size or (rows + 1) * len(ids[i]) > budget:
                chunks.append([])
            chunks[-1].append(i)
        return out, [_pad(chunk, ids) for chunk in chunks]


def _pad(chunk: list[int], ids: list[list[int]]) -> _Batch:
    longest = len(ids[chunk[-1]])
    input_ids = np.zeros((len(chunk), longest), dtype=np.int64)
    mask = np.zeros((len(chunk), longest), dtype=np.int64)
    for row, i in enumerate(chunk):
        n = len(ids[i])
        input_ids[row, :n] = ids[i]
        mask[row, :n] = 1
    return chunk, input_ids, mask


# Opset 20 is the first with a Gelu op; IR version 9 is the one released with it, so
# onnxruntime >= 1.17 can load the graph.
_OPSET = 20
_IR_VERSION = 9


class _Graph:
    """Collects ONNX nodes and initializers; each op's output gets a fresh name.

    Weights are declared as external data and handed to onnxruntime as numpy arrays
    (add_external_initializers) instead of bytes inside the protobuf. Putting 90 MB
    through TensorProtos, the GraphProto, the ModelProto and the serialized bytes took
    ~0.7 s and a 470 MB peak; this way the graph (~17 KB) is built and serialized in
    ~15 ms, so there is nothing worth caching on disk.
    """

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self._helper = helper
        self._numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.weights: dict[str, np.ndarray] = {}

    def const(self, value: Any) -> str:
        """A small constant (shape, axis, scalar), stored inside the graph."""
        name = f"const{len(self.initializers)}"
        self.initializers.append(self._numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name: str, value: np.ndarray) -> str:
        """A float32 weight tensor, stored outside the graph (see the class docstring)."""
        from onnx import TensorProto

        array = np.ascontiguousarray(value, np.float32)
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=array.shape)
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value="in-memory")
        self.initializers.append(tensor)
        self.weights[name] = array
        return name

    def op(self, op_type: str, *inputs: str, output: str = "", **attributes: Any) -> str:
        output = output or f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(self._helper.make_node(op_type, list(inputs), [output], **attributes))
        return output


def _build_onnx_model(
    w: dict[str, np.ndarray], *, heads: int, layers: int, eps: float
) -> tuple[Any, dict[str, np.ndarray]]:
    """The BERT encoder plus mean pooling and L2 normalization as an onnx.ModelProto.

    Inputs: input_ids and attention_mask, int64 (batch, seq). Output: embedding,
    float32 (batch, hidden), unit rows. The arithmetic is BertModel's, with mean pooling.
    Also returns the weights the model refers to as external data, by name.
    """
    from onnx import TensorProto, helper

    g = _Graph()
    f32 = np.float32
    w = dict(w)  # fused and folded tensors are added under names of their own
    hidden = w["embeddings.word_embeddings.weight"].shape[1]
    head_dim = hidden // heads

    def param(name: str) -> str:
        return g.weight(name, w[name])

    def dense(x: str, name: str) -> str:
        # Gemm takes torch Linear's (out, in) weights as they are (transB) and adds the
        # bias as it writes its output: no transposed copy, no separate Add pass.
        weight, bias = param(f"{name}.weight"), param(f"{name}.bias")
        return g.op("Gemm", x, weight, bias, transB=1)

    def layer_norm(x: str, name: str) -> str:
        weight, bias = param(f"{name}.weight"), param(f"{name}.bias")
        return g.op("LayerNormalization", x, weight, bias, axis=-1, epsilon=eps)

    # Single-segment input: every token has type 0, so that embedding row is folded
    # into the position table.
    w["embeddings.position_embeddings.weight"] = (
        w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    )
    seq_len = g.op("Shape", "input_ids", start=1, end=2)
    zero = g.const(np.array([0], np.int64))
    words = g.op("Gather", param("embeddings.word_embeddings.weight"), "input_ids")
    positions = g.op("Slice", param("embeddings.position_embeddings.weight"), zero, seq_len, zero)
    x = layer_norm(g.op("Add", words, positions), "embeddings.LayerNorm")
    # Token-wise work runs on (batch * seq, hidden) rows, the 2-D shape Gemm needs;
    # attention and pooling view them per sentence again.
    rows_shape = g.const(np.array([-1, hidden], np.int64))
    x = g.op("Reshape", x, rows_shape)

    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    # Additive mask: padded keys get a huge negative score so softmax gives them ~0
    # weight (the same finfo.min masking transformers uses). Shape (batch, 1, 1, seq).
    key_bias = g.op("Mul", g.op("Sub", g.const(f32(1.0)), mask), g.const(np.finfo(f32).min))
    key_bias = g.op("Unsqueeze", key_bias, g.const(np.array([1, 2], np.int64)))

    def per_sentence(*dims: int) -> str:
        before, after = g.const(np.array([-1], np.int64)), g.const(np.array(dims, np.int64))
        return g.op("Concat", before, seq_len, after, axis=0)

    qkv_shape = per_sentence(3, heads, head_dim)
    q_k_v = [g.const(np.int64(j)) for j in range(3)]
    # Folding 1/sqrt(head_dim) into the query projection saves a Mul per layer.
    qkv_scale = np.array([1.0 / math.sqrt(head_dim), 1.0, 1.0], f32).repeat(hidden)

    for i in range(layers):
        p = f"encoder.layer.{i}."
        # One GEMM for q, k and v instead of three small ones.
        parts = [f"{p}attention.self.{n}" for n in ("query", "key", "value")]
        for kind, scale in (("weight", qkv_scale[:, None]), ("bias", qkv_scale)):
            fused = np.concatenate([w[f"{n}.{kind}"] for n in parts])
            w[f"{p}attention.qkv.{kind}"] = fused * scale
        qkv = g.op("Reshape", dense(x, f"{p}attention.qkv"), qkv_shape)
        # q, k and v become (batch, heads, seq, head_dim); k is transposed for q @ k^T.
        q, k_t, v = (
            g.op("Transpose", g.op("Gather", qkv, j, axis=2), perm=perm)
            for j, perm in zip(q_k_v, ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]), strict=True)
        )
        probs = g.op("Softmax", g.op("Add", g.op("MatMul", q, k_t), key_bias), axis=-1)
        context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = g.op("Reshape", context, rows_shape)
        x = g.op("Add", x, dense(context, f"{p}attention.output.dense"))
        x = layer_norm(x, f"{p}attention.output.LayerNorm")
        inner = g.op("Gelu", dense(x, f"{p}intermediate.dense"), approximate="none")
        x = layer_norm(g.op("Add", x, dense(inner, f"{p}output.dense")), f"{p}output.LayerNorm")

    # Mean pooling over real tokens as a batched (1 x seq) @ (seq x hidden) matmul.
    axis1 = g.const(np.array([1], np.int64))
    x = g.op("Reshape", x, per_sentence(hidden))
    summed = g.op("Squeeze", g.op("MatMul", g.op("Unsqueeze", mask, axis1), x), axis1)
    counts = g.op("Max", g.op("ReduceSum", mask, axis1, keepdims=1), g.const(f32(1e-9)))
    mean = g.op("Div", summed, counts)
    norm = g.op("Max", g.op("ReduceL2", mean, axis1, keepdims=1), g.const(f32(1e-12)))
    g.op("Div", mean, norm, output="embedding")

    def tensor(name: str, dtype: int, shape: list[str | int]) -> Any:
        return helper.make_tensor_value_info(name, dtype, shape)

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [tensor(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask")],
        [tensor("embedding", TensorProto.FLOAT, ["batch", hidden])],
        g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="echo-memory"
    )
    model.ir_version = _IR_VERSION
    return model, g.weights


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

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out, batches = self._batches(texts)
        session = self._small if len(out) <= _SMALL_CALL else self._bulk_session()
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
    from memories.search import model_cache

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


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}


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
