"""The torch-free embedder reproduces sentence-transformers' all-MiniLM-L6-v2 vectors."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from memories.embeddings import get_embedder

REFERENCE = json.loads((Path(__file__).parents[1] / "fixtures/minilm_reference.json").read_text())


def test_vectors_match_the_reference_sentence_transformers_output():
    cases = REFERENCE["cases"]
    ours = get_embedder().embed([case["text"] for case in cases])
    reference = np.array([case["embedding"] for case in cases], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    cosines = (ours * reference).sum(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, (cases[worst]["text"][:80], float(cosines.min()))
    assert ours.shape == (len(cases), REFERENCE["dimensions"]) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batching_does_not_change_a_vector():
    texts = [case["text"] for case in REFERENCE["cases"][:12]]
    together = get_embedder().embed(texts)
    alone = np.vstack([get_embedder().embed([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_the_model_is_loaded_once_and_shared_by_threads():
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(get_embedder())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(embedder) for embedder in seen}) == 1
