"""Each process's short memory of the API key rows it has just read.

A request's key then costs no query when the same key was read from the database less
than TTL_SECONDS ago in this process. The bound is the whole invalidation story: a key
revoked, or deleted with its account or holder, in any process is refused by every
process within TTL_SECONDS, with no message between processes that could be lost. The
process that revokes a key also forgets it at once (accounts/services.py).
tests/accounts/test_key_revocation_across_processes.py holds every process to one second.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime

TTL_SECONDS = 0.5
# A process serves a handful of keys at a time; this only stops a stream of distinct
# valid keys from growing the dict without end.
MAX_KEYS = 10_000


@dataclass(frozen=True)
class KeyRow:
    """What admission needs of an ApiKey row."""

    id: int
    account_id: int
    holder_id: int
    tool: str
    secret_hash: str
    default_memory_id: int | None
    revoked: bool
    last_used_at: datetime | None


_rows: dict[str, tuple[float, KeyRow]] = {}


def get(prefix: str) -> KeyRow | None:
    """The row read for this prefix less than TTL_SECONDS ago, else None."""
    entry = _rows.get(prefix)
    if entry is None or entry[0] <= time.monotonic():
        return None
    return entry[1]


def put(prefix: str, row: KeyRow) -> None:
    if len(_rows) >= MAX_KEYS:
        _rows.clear()
    _rows[prefix] = (time.monotonic() + TTL_SECONDS, row)


def touched(prefix: str, when: datetime) -> None:
    """Note a new last_used_at on the kept row; it expires when it would have (the rest of
    the row is no fresher than when it was read)."""
    entry = _rows.get(prefix)
    if entry is not None:
        _rows[prefix] = (entry[0], replace(entry[1], last_used_at=when))


def forget(prefix: str | None = None) -> None:
    """Drop one key (after it is revoked here), or all of them (tests)."""
    if prefix is None:
        _rows.clear()
    else:
        _rows.pop(prefix, None)
