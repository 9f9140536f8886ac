"""A process's short memory of rows it has just read, so a request's gate costs no query.

The time bound is the whole invalidation story: a row changed or deleted in any process
is seen by every process within `ttl` seconds, with no message between processes that
could be lost; the process that changes a row forgets it at once. accounts/key_cache.py
keeps API keys this way, mcp_gateway/sessions.py MCP sessions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ShortMemory(Generic[K, V]):
    def __init__(self, ttl: float, max_entries: int):
        self.ttl = ttl
        # A process serves a handful of keys or sessions at a time; the cap only stops a
        # stream of distinct valid ones from growing the dict without end.
        self.max_entries = max_entries
        self._rows: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> V | None:
        """The value kept for `key` less than `ttl` seconds ago, else None."""
        entry = self._rows.get(key)
        if entry is None or entry[0] <= time.monotonic():
            return None
        return entry[1]

    def put(self, key: K, value: V) -> None:
        if len(self._rows) >= self.max_entries:
            self._rows.clear()
        self._rows[key] = (time.monotonic() + self.ttl, value)

    def update(self, key: K, change: Callable[[V], V]) -> None:
        """Change a kept value in place; it expires when it would have (the rest of it is no
        fresher than when it was read)."""
        entry = self._rows.get(key)
        if entry is not None:
            self._rows[key] = (entry[0], change(entry[1]))

    def forget(self, key: K | None = None) -> None:
        """Drop one entry (after this process changed its row), or all of them (tests)."""
        if key is None:
            self._rows.clear()
        else:
            self._rows.pop(key, None)
