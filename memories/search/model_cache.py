"""Files derived from the installed model, built once per machine.

They live in the user cache directory, named by the model they were built from, so every
install on the machine (a checkout, a wheel in a venv) shares one, a package folder is
never written to, and a changed model gets files of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from memories.search.model_files import MODEL_DIR


def model_digest() -> str:
    """Names the model: its tokenizer and config, and the weights' size and first megabyte
    (hashing all 90 MB cost every process a read)."""
    sha = hashlib.sha256()
    for name in ("tokenizer.json", "config.json"):
        sha.update((MODEL_DIR / name).read_bytes())
    weights = MODEL_DIR / "model.safetensors"
    sha.update(str(weights.stat().st_size).encode())
    with weights.open("rb") as handle:
        sha.update(handle.read(1 << 20))
    return sha.hexdigest()[:16]


def path_of(stem: str, suffix: str) -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("echo-memory")) / f"{stem}_{model_digest()}{suffix}"


def built_once(stem: str, suffix: str, write: Callable[[Path], None]) -> Path:
    """The file, built by `write(scratch_path)` if this machine has none yet. One process
    builds; others started meanwhile wait for its file, and none sees a half-written one."""
    path = path_of(stem, suffix)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{stem}-") as folder:
                scratch = Path(folder, path.name)
                write(scratch)
                os.replace(scratch, path)
    return path
