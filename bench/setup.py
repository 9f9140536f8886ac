"""A fresh, private Echo Memory for a benchmark run: its own embedded Postgres in a temp dir."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# $ECHO_BENCH_CACHE moves the caches (vectors, recordings), e.g. to /tmp to share them.
CACHE = Path(os.environ.get("ECHO_BENCH_CACHE") or Path(__file__).resolve().parent / ".cache")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def fresh_instance(*, indexing: str = "inline", keep: str | None = None) -> Path:
    """Start a throw-away box and set Django up on it; `keep` reuses/keeps a home dir."""
    for variable in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY"):
        os.environ.pop(variable, None)
    home = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="echo-bench-"))
    os.environ["ECHO_MEMORY_HOME"] = str(home)
    os.environ["ECHO_MEMORY_INDEXING"] = indexing
    os.environ["ECHO_MEMORY_SELF_HOSTED"] = "1"
    os.environ["DJANGO_SETTINGS_MODULE"] = "echomem.settings"
    from echomem.db import maintenance_process
    from echomem.runtime import prepare

    maintenance_process()  # bulk loads and index builds are not requests: no per-request limits

    prepare()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if not keep:
        from echomem import embedded_db

        def _remove() -> None:
            embedded_db.stop(home)
            shutil.rmtree(home, ignore_errors=True)

        atexit.register(_remove)
    from memories.search.indexing import stop_background

    # Registered last, so it runs first: an indexer thread still inside the model when the
    # database stops (or the interpreter ends) crashed the exit of a bench that used one.
    atexit.register(stop_background, timeout=120)
    return home


def bench_principal(username: str = "bench"):
    """An account with a key, as an agent would hold it."""
    from django.contrib.auth import get_user_model

    from accounts.principal import principal_from_key
    from accounts.services import api_key_create
    from memories.catalog.new_accounts import account_create

    user = get_user_model().objects.create_user(username=username)
    account = account_create(owner=user, name=f"{username} account")
    _, plaintext = api_key_create(account=account, holder=user, name="bench", tool="bench")
    return principal_from_key(plaintext), account


class CachedEmbedder:
    """The real model, memoized on disk by text: same vectors, paid for once."""

    def __init__(self, inner):
        self.inner = inner
        self.dimensions = inner.dimensions
        CACHE.mkdir(exist_ok=True)
        self.path = CACHE / "vectors.npz"
        self.store: dict[str, np.ndarray] = {}
        if self.path.exists():
            data = np.load(self.path)
            self.store = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.misses = 0

    def embed(self, texts, *, bulk: bool = False):
        keys = [hashlib.blake2b(t.encode(), digest_size=12).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.store]
        if missing:
            vectors = self.inner.embed([texts[i] for i in missing], bulk=bulk)
            for i, vector in zip(missing, vectors, strict=True):
                self.store[keys[i]] = vector
            self.misses += len(missing)
        return np.stack([self.store[k] for k in keys])

    def __getattr__(self, name: str):
        # Everything else is the model's own: the first-pass vectors (embed_quick, what a
        # query pays for a waiting fact, stores nothing settled) and the tokenizer.
        return getattr(self.inner, name)

    def save(self) -> None:
        keys = list(self.store)
        np.savez(self.path, keys=np.array(keys), vectors=np.stack([self.store[k] for k in keys]))


def use_cached_embedder(*, queries_too: bool) -> CachedEmbedder:
    """Route stored facts' (and optionally queries') embeddings through the on-disk cache.

    The vectors stay the model's; a speed benchmark keeps queries uncached, since
    embedding the query is part of what it measures.
    """
    from memories.graph import selectors
    from memories.search import embeddings

    cached = CachedEmbedder(embeddings.get_embedder())
    # The process-wide embedder itself, so every module that asks for it (the indexer's
    # storing, re-embedding, entity resolution, whatever imports it later) reads the cache;
    # a speed benchmark's queries keep the model, by the name query_memory calls.
    embeddings._embedder = cached
    if not queries_too:
        selectors.get_embedder = lambda: cached.inner
    return cached
