"""Files derived from the model are built once per machine and never seen half-written."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from memories.search import model_cache


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name: str(tmp_path / name))
    return tmp_path / "echo-memory"


def test_a_file_is_built_once_and_named_by_the_model(cache):
    builds = []

    def write(scratch: Path) -> None:
        builds.append(scratch)
        scratch.write_bytes(b"built")

    first = model_cache.built_once("table", ".bin", write)
    second = model_cache.built_once("table", ".bin", write)
    assert first == second == cache / f"table_{model_cache.model_digest()}.bin"
    assert len(builds) == 1 and builds[0] != first and first.read_bytes() == b"built"


def test_a_build_that_fails_leaves_nothing_behind(cache):
    def write(scratch: Path) -> None:
        scratch.write_bytes(b"half")
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space"):
        model_cache.built_once("table", ".bin", write)
    assert not model_cache.path_of("table", ".bin").exists()
    assert [p.name for p in cache.iterdir()] == [f"table_{model_cache.model_digest()}.lock"]
