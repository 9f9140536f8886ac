"""Where the installed embedding model's files are, and the error for when they are not.

Below both the embedder (memories/search/embeddings.py) and the files built from the
model once per machine (model_cache.py), which name the model by these files.
"""

from __future__ import annotations

from pathlib import Path

# Shipped inside the package (the wheel carries it; a checkout gets it from ./dev).
# The model ships inside the app (pyproject package-data: memories/embedding_model/).
MODEL_DIR = Path(__file__).resolve().parent.parent / "embedding_model"
_INSTALL_HINT = (
    "reinstall Echo Memory from its wheel (`pip install --force-reinstall echo_mem-*.whl`), "
    "or in a checkout run `python build_tools/echo_model_fetch.py`"
)


class EmbeddingModelNotInstalled(RuntimeError):
    """The model files or the libraries needed to run them are missing."""


def _model_dir() -> Path:
    path = MODEL_DIR
    if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
        raise EmbeddingModelNotInstalled(
            f"the embedding model is missing from {path}: {_INSTALL_HINT}"
        )
    return path
