"""Each process's short memory of the API key rows it has just read.

A request's key then costs no query when the same key was read from the database less
than TTL_SECONDS ago in this process (echomem/short_memory.py): a key revoked, or deleted
with its account or holder, in any process is refused by every process within
TTL_SECONDS. The process that revokes a key also forgets it at once (accounts/services.py).
tests/accounts/test_key_revocation_across_processes.py holds every process to one second.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from echomem.short_memory import ShortMemory

TTL_SECONDS = 0.5


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
    requests_per_minute: int | None = None
    # The key's limits (accounts/limits.py) and a rotation's old secret, as stored.
    read_only: bool = False
    memory_ids: frozenset[int] | None = None
    expires_at: datetime | None = None
    previous_secret_hash: str = ""
    previous_secret_until: datetime | None = None


_rows: ShortMemory[str, KeyRow] = ShortMemory(TTL_SECONDS, max_entries=10_000)
get = _rows.get
put = _rows.put
forget = _rows.forget


def touched(prefix: str, when: datetime) -> None:
    """Note a new last_used_at on the kept row."""
    _rows.update(prefix, lambda row: replace(row, last_used_at=when))
