"""The fuzz server: a real `echo-memory serve` with two accounts, watched after every request.

After each request the suite checks that the server logged no traceback (a request
that raised is a failure even when the client got a tidy reply) and that the
database holds what the replies reported (tests/fuzz/ledger.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tests.cli.conftest import server_tracebacks
from tests.fuzz.client import Reply
from tests.fuzz.invariants import INTERNAL_ERROR
from tests.fuzz.ledger import Ledger

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")
POOL_SIZE = 500
# Figures of the whole run, printed at its end (tests/fuzz/conftest.py).
STATS: Counter = Counter()


class LogWatch:
    """Reads only what the server logged since the last look."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0

    def new_tracebacks(self) -> list[str]:
        with self.path.open("rb") as log:
            log.seek(self.offset)
            chunk = log.read()
        # Keep a partial last line for next time: the server may be mid-write.
        end = chunk.rfind(b"\n") + 1
        self.offset += end
        return server_tracebacks(chunk[:end].decode("utf-8", errors="replace"))


@dataclass
class Account:
    name: str
    key: str
    id: int = 0


@dataclass
class FuzzServer:
    base_url: str
    owner: Account  # the account every case runs as
    outsider: Account  # another tenant: its rows must never move, its ids never leak
    db: psycopg.Connection
    log: LogWatch
    ledger: Ledger | None = None
    pool: list[str] = field(default_factory=list)  # ids the server issued to the owner
    foreign: set[str] = field(default_factory=set)  # ids of the outsider's rows
    stats: Counter = field(default_factory=lambda: STATS)

    def remember(self, ids: set[str]) -> None:
        fresh = [i for i in sorted(ids) if i not in self.foreign and i not in self.pool]
        self.pool.extend(fresh)
        del self.pool[:-POOL_SIZE]

    def observe(self, reply: Reply) -> None:
        """Count what the long run reports: requests, 5xx and -32603 seen."""
        self.stats["requests"] += 1
        if reply.status >= 500:
            self.stats["5xx"] += 1
        bodies = reply.body if isinstance(reply.body, list) else [reply.body]
        for body in bodies:
            if isinstance(body, dict) and isinstance(body.get("error"), dict) \
                    and body["error"].get("code") == INTERNAL_ERROR:
                self.stats["-32603"] += 1

    @contextmanager
    def judging(self, what: str) -> Iterator[None]:
        """Judge one exchange: whatever the body asserts, plus no traceback in the server log
        and the database as the replies said. A failed judgement resynchronises the ledger, so
        the next case is judged on its own, and carries the server's tracebacks with it."""
        try:
            yield
        except BaseException as exc:
            tracebacks = self.log.new_tracebacks()
            self.stats["tracebacks"] += len(tracebacks)
            if tracebacks and isinstance(exc, AssertionError):
                exc.add_note("the server logged:\n" + "\n".join(tracebacks))
            self.ledger.resync()
            raise
        tracebacks = self.log.new_tracebacks()
        if tracebacks:
            self.stats["tracebacks"] += len(tracebacks)
            self.ledger.resync()
            raise AssertionError(f"the server logged a traceback for {what}:\n"
                                 + "\n".join(tracebacks))
        try:
            self.ledger.check(what)
        finally:
            self.stats["ledger_checks"] += 1
            self.stats["rows"] = self.ledger.rows_checked
            self.stats["events"] = self.ledger.events_verified
