"""The MiniLM embedder's configuration, tokenization and batching, apart from the runtime
that runs its graph (memories/search/embeddings.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memories.search.model_files import EmbeddingModelNotInstalled, _model_dir

# A batch holds at most batch_size x this many padded tokens. Attention scores grow
# with rows x seq^2: 40 texts padded to 256 wordpieces need 126 MB of them, which
# onnxruntime's arena then keeps for good (RSS 760 MB). With the cap, long texts go
# 4 x fewer to a batch and typical ones (20-60 wordpieces) are not affected.
_TOKENS_PER_ROW = 64

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


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}

