"""First-pass vectors: a fact is findable by meaning the moment its write commits.

The model's vector (with context, memories/search/storing.py) costs about 15 ms of CPU a fact
on two cores, so a bulk write is embedded later, by the indexer. Until then a fact
carries a first-pass vector computed in the write itself, in microseconds: the weighted
mean of per-wordpiece vectors, each the model's own embedding of that wordpiece alone
(a static distillation of the model, as model2vec does), in the model's space.

- Weights: smooth inverse frequency (Arora et al. 2017), frequency estimated from the
  wordpiece's rank in the vocabulary (BERT's vocabulary is roughly in frequency order),
  so "the" counts for little and "kubernetes" for a lot.
- Centering: every wordpiece vector shares a common direction; subtracting the mean
  makes cosines between first-pass vectors and the model's vectors meaningful.
- Episode context, decaying: the indexer embeds a fact with the two facts before it in its
  episode (a reply like "Yes, last week!" means little alone). A first-pass vector adds
  the previous fact's first-pass vector at half weight and the one before at a quarter
  (CONTEXT_WEIGHTS), each unit length first, so the fact's own words stay the largest
  part. Pooling the three facts' wordpieces together, as the model's input does, made a
  fact's own words a third of its vector, and a 500-fact episode's paraphrased fact fell
  out of the top ten. With every fact on its first-pass vector alone, the decaying
  context lifted hybrid recall@10 on LoCoMo from 0.693 to 0.725 and on the runbooks set
  from 0.552 to 0.615 (docs/benchmarks.md, "First-pass vectors").
- Calibration: a first-pass cosine runs lower than the model's cosine for the same pair.
  query_memory ranks both kinds in one list, so a first-pass cosine is mapped onto the
  model's scale by a straight line fitted, without labels, on bench/data/runbooks: each
  question's ten best first-pass cosines against its ten best model cosines, in order,
  both with context (a first-pass tenth-best should count as a model tenth-best). A line
  fitted over every pair, as first done, was ruled by the unrelated bulk and put waiting
  facts below settled ones: with a fifth of LoCoMo's facts settled, vector recall@10 was
  0.270, under both the all-first-pass 0.435 and the all-settled 0.577; with this line,
  0.437 (docs/benchmarks.md, "First-pass vectors").

The table (30,522 wordpieces x 384, float16, 23 MB) is built once per machine from the
installed model (about 30 s on two idle cores) and kept in the user cache directory.
`echo-memory quickstart`, `serve` and `check`, and ./dev, build it ahead of the first
write; a process that finds none builds it on first use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from pathlib import Path

import numpy as np
from pgvector import HalfVector

from memories.search import model_cache, vector_params

SIF = 1e-3
# Wordpieces before this id are [PAD], [unusedN], specials and single characters.
FIRST_WORD_ID = 1996
# Weights of the facts one and two positions before, in the same episode.
CONTEXT_WEIGHTS = (0.5, 0.25)
# The line first-pass cosine -> model cosine, fitted by bench/first_pass.py on the runbooks
# set (1.083, 0.127 with the model's old context-first layout; 1.098, 0.125 with fact first).
CALIBRATION_SCALE = 1.10
CALIBRATION_OFFSET = 0.125
_BATCH = 1024
# As the model reads at most this many (sentence-transformers' max_seq_length).
MAX_WORDPIECES = 256

_weighted: np.ndarray | None = None
_lock = threading.Lock()
# One pool per process (a forked child starts its own).
_helpers: dict[int, ThreadPoolExecutor] = {}


def vectors(texts: Sequence[str]) -> np.ndarray:
    """Unit-length first-pass vectors of each text alone, float32, one row per text."""
    weighted = _loaded()
    # Offsets are not needed, and skipping them is the faster call.
    encodings = _tokenizer().encode_batch_fast(list(texts), add_special_tokens=False)
    lengths = [len(e.ids) for e in encodings]
    out = np.zeros((len(texts), weighted.shape[1]), dtype=np.float32)
    if not any(lengths):
        return out
    # Every text's wordpieces in one gather, then a sum per text: a loop of row sums beat
    # np.add.reduceat (2x) and an indicator matrix product here.
    rows = weighted[np.fromiter(chain.from_iterable(e.ids for e in encodings),
                                dtype=np.int64, count=sum(lengths))]
    start = 0
    for row, length in enumerate(lengths):
        if length:
            rows[start:start + length].sum(axis=0, out=out[row])
        start += length
    return _unit_rows(out)


def in_episode(texts: Sequence[str], positions: Sequence[int], *,
               context: int = len(CONTEXT_WEIGHTS), alone: np.ndarray | None = None,
               ) -> np.ndarray:
    """Unit-length first-pass vectors of one episode's facts, each with its context: the
    facts at the `context` positions before it among these (at most two; the indexer's
    context, memories/search/storing.py). A text with no word of its own still gets no vector.
    `alone`: the texts' `vectors`, if already computed (`soon`)."""
    alone = vectors(texts) if alone is None else alone
    row_at = {position: row for row, position in enumerate(positions)}
    has_words = alone.any(axis=1)
    out = alone.copy()
    for back, weight in enumerate(CONTEXT_WEIGHTS[:context], start=1):
        before = np.array([row_at.get(position - back, -1) for position in positions],
                          dtype=np.int64)
        mixed = has_words & (before >= 0)
        out[mixed] += weight * alone[before[mixed]]
    return _unit_rows(out)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length, in place; a zero row stays zero."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=matrix, where=norms > 0)


def soon(texts: Sequence[str]) -> Future[np.ndarray] | None:
    """`vectors(texts)` computed on a helper thread, so a write computes them while it waits
    for the database (the tokenizer and numpy leave the interpreter lock while they work);
    None when first-pass vectors are off."""
    from django.conf import settings

    if not settings.ECHO_MEMORY_FIRST_PASS:
        return None
    if os.getpid() not in _helpers:
        _helpers[os.getpid()] = ThreadPoolExecutor(max_workers=2,
                                                   thread_name_prefix="first-pass")
    return _helpers[os.getpid()].submit(vectors, list(texts))


def halfvecs(texts: Sequence[str], positions: Sequence[int], *,
             alone: np.ndarray | None = None) -> list[HalfVector | None]:
    """One episode's first-pass vectors (`in_episode`, with as many facts of context as
    the indexer embeds with) as parameters for an INSERT (memories/search/vector_params.py), None
    for each when ECHO_MEMORY_FIRST_PASS is off. `alone` as for `in_episode`."""
    from django.conf import settings

    if not settings.ECHO_MEMORY_FIRST_PASS:
        return [None] * len(texts)
    rows = in_episode(texts, positions, context=settings.ECHO_MEMORY_EMBED_CONTEXT,
                      alone=alone)
    # A text of digits and punctuation only has no word to stand on: no vector, as a
    # zero vector has no direction to compare.
    return [vector_params.halfvec(row) if row.any() else None for row in rows]


def ensure() -> Path:
    """Build the table if this machine has none yet; returns where it is."""
    _loaded()
    return _cached_path()


def _loaded() -> np.ndarray:
    """The table with each wordpiece's weight applied, in float32: 47 MB a process that
    writes, against 23 MB in float16, because converting the gathered rows from float16
    on every write cost more than the rest of the first pass together."""
    global _weighted
    if _weighted is None:
        with _lock:
            if _weighted is None:
                table = _read_or_build()
                rank = np.maximum(np.arange(len(table)) - FIRST_WORD_ID + 1, 1)
                frequency = 1.0 / (rank * np.log(len(table)))
                weights = (SIF / (SIF + frequency)).astype(np.float32)
                _weighted = table.astype(np.float32) * weights[:, None]
    return _weighted


_tokenizers: dict[int, object] = {}


def _tokenizer():
    """The model's tokenizer alone: a write never loads the model itself (nor ONNX Runtime,
    which must not be loaded in a process that forks)."""
    if os.getpid() not in _tokenizers:
        from tokenizers import Tokenizer

        from memories.search.model_files import _model_dir

        tokenizer = Tokenizer.from_file(str(_model_dir() / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MAX_WORDPIECES)
        tokenizer.no_padding()
        _tokenizers[os.getpid()] = tokenizer
    return _tokenizers[os.getpid()]


def _cached_path() -> Path:
    return model_cache.path_of("first_pass", ".npy")


def _read_or_build() -> np.ndarray:
    def write(scratch: Path) -> None:
        with scratch.open("wb") as handle:
            np.save(handle, _build())

    return np.load(model_cache.built_once("first_pass", ".npy", write))


def _build() -> np.ndarray:
    """Each wordpiece embedded alone ([CLS] piece [SEP]), minus the mean word vector."""
    from memories.search.embeddings import get_embedder

    embedder = get_embedder()
    size = embedder._tokenizer.get_vocab_size()
    cls_id = embedder._tokenizer.token_to_id("[CLS]")
    sep_id = embedder._tokenizer.token_to_id("[SEP]")
    table = np.zeros((size, embedder.dimensions), dtype=np.float32)
    for start in range(FIRST_WORD_ID, size, _BATCH):
        ids = np.arange(start, min(size, start + _BATCH), dtype=np.int64)
        table[ids] = embedder.embed_ids(
            np.stack([np.full(len(ids), cls_id), ids, np.full(len(ids), sep_id)], axis=1))
    table[FIRST_WORD_ID:] -= table[FIRST_WORD_ID:].mean(axis=0)
    return table.astype(np.float16)
