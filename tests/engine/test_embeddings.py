"""The torch-free embedder reproduces sentence-transformers' all-MiniLM-L6-v2 vectors."""

from __future__ import annotations

import functools
import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from memories.search import embeddings
from memories.search.embeddings import (
    Embedder,
    EmbeddingModelNotInstalled,
    OnnxMiniLMEmbedder,
    get_embedder,
)

REFERENCE = json.loads((Path(__file__).parents[1] / "fixtures/minilm_reference.json").read_text())
TEXTS = [case["text"] for case in REFERENCE["cases"]]



def reference_vectors(count: int) -> np.ndarray:
    vectors = np.array([case["embedding"] for case in REFERENCE["cases"]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.resize(vectors, (count, vectors.shape[1]))


def assert_matches_the_reference(texts: list[str], ours: np.ndarray) -> None:
    cosines = (ours * reference_vectors(len(texts))).sum(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, (texts[worst][:80], float(cosines.min()))
    assert ours.shape == (len(texts), REFERENCE["dimensions"]) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@functools.cache
def embedder_of(backend: type[Embedder]) -> Embedder:
    # Each model costs ~150 MB and a second to load; reuse the process-wide one.
    shared = get_embedder()
    return shared if type(shared) is backend else backend()


@functools.cache
def vectors_of(backend: type[Embedder]) -> np.ndarray:
    return embedder_of(backend).embed(TEXTS)


@pytest.fixture
def backend() -> type[Embedder]:
    return OnnxMiniLMEmbedder


def test_vectors_match_the_reference_sentence_transformers_output(backend):
    assert_matches_the_reference(TEXTS, vectors_of(backend))


@pytest.mark.parametrize("batch", [1, 8, 32, 64])
def test_onnx_vectors_match_the_reference_at_every_batch_size(batch):
    # The graph has dynamic batch and sequence axes. The 40 cases repeat to fill 64, so
    # short texts run up to 1, 8, 32 and 64 to a batch, and in the calls of 8 the three
    # 256-wordpiece cases are padded together with short ones.
    embedder = embedder_of(OnnxMiniLMEmbedder)
    assert embedder.batch_size >= 64
    texts = list(np.resize(np.array(TEXTS, dtype=object), 64))
    ours = np.vstack([embedder.embed(texts[i : i + batch]) for i in range(0, len(texts), batch)])
    assert_matches_the_reference(texts, ours)


def test_batching_does_not_change_a_vector(backend):
    # 12 texts run as one batch (on the ONNX backend's bulk session), 1 on their own.
    embedder = embedder_of(backend)
    texts = TEXTS[:12]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_a_bare_string_is_refused(backend):
    embedder = embedder_of(backend)
    with pytest.raises(TypeError):
        embedder.embed("one text")
    assert embedder.embed([]).shape == (0, REFERENCE["dimensions"])


def test_get_embedder_runs_onnx_and_a_missing_runtime_says_what_to_install(monkeypatch):
    assert isinstance(get_embedder(), OnnxMiniLMEmbedder)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` fail
    with pytest.raises(EmbeddingModelNotInstalled, match="pip install onnx onnxruntime"):
        OnnxMiniLMEmbedder()


def test_thread_counts_come_from_the_environment(monkeypatch):
    variable = embeddings.THREADS_VARIABLE
    monkeypatch.delenv(variable, raising=False)
    assert embeddings._threads_from_env(variable, 3) == 3
    monkeypatch.setenv(variable, "2")
    assert embeddings._threads_from_env(variable, 3) == 2
    monkeypatch.setenv(variable, "many")
    with pytest.raises(ValueError, match=variable):
        embeddings._threads_from_env(variable, 3)


def test_the_model_is_loaded_once_and_shared_by_threads():
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(get_embedder())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(embedder) for embedder in seen}) == 1


def test_the_int8_copy_ranks_close_to_the_model_and_is_never_the_settled_one():
    """embed_quick (query_memory's provisional vectors) stays close to the float32 model,
    and is not so close that it could pass for the settled state."""
    embedder = get_embedder()
    quick, settled = embedder.embed_quick(TEXTS), embedder.embed(TEXTS)
    cosines = (quick * settled).sum(axis=1)
    assert quick.shape == settled.shape and quick.dtype == np.float32
    assert np.allclose(np.linalg.norm(quick, axis=1), 1.0, atol=1e-5)
    assert cosines.min() >= 0.95 and cosines.mean() >= 0.98, cosines
    assert not np.allclose(quick, settled, atol=1e-4)


@pytest.mark.injects_server_fault
def test_without_an_int8_copy_the_query_rescores_with_the_float32_model(monkeypatch, caplog):
    embedder = OnnxMiniLMEmbedder()

    def no_temporary_directory(self):
        raise OSError("[Errno 30] Read-only file system: '/tmp/echo-int8-x'")

    monkeypatch.setattr(OnnxMiniLMEmbedder, "_new_quick_session", no_temporary_directory)
    quick = embedder.embed_quick(TEXTS[:3])
    assert np.array_equal(quick, embedder.embed(TEXTS[:3]))
    assert "could not build the int8 model" in caplog.text
