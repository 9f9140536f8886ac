"""What the database must hold: exactly what successful replies reported, and an intact audit chain.

Each fuzzed account has expected row counts (facts, entities, episodes, recall saves,
audit events), moved only by successful tool replies; after every request the real
counts are read from the server's database and compared, and the audit events the
request appended are verified as a continuation of the chain already checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import psycopg

from audit.chain import GENESIS
from audit.models import AuditEvent
from audit.verify import verify_events
from tools.registry import TOOLS

TABLES = {"facts": "memories_fact", "entities": "memories_entity",
          "episodes": "memories_episode", "recall_saves": "memories_recallsave",
          "notes": "memories_note"}
KINDS = [*TABLES, "audit_events"]
COUNTS = "SELECT a.id, {} FROM accounts_account a WHERE a.id = ANY(%s)".format(", ".join(
    [f"(SELECT count(*) FROM {table} x JOIN memories_memory m ON m.id = x.memory_id "
     f"WHERE m.account_id = a.id)" for table in TABLES.values()]
    + ["(SELECT count(*) FROM memories_auditevent e WHERE e.account_id = a.id)"]))
EVENT_FIELDS = [field.column for field in AuditEvent._meta.concrete_fields]
EVENTS = (f"SELECT {', '.join(EVENT_FIELDS)} FROM memories_auditevent "
          "WHERE account_id = %s AND seq > %s ORDER BY seq")
HEAD = "SELECT seq, hash FROM memories_auditchainhead WHERE account_id = %s"


def _write_episode(output: dict[str, Any]) -> Counter:
    if not output.get("stored") or not output.get("episode_id"):
        return Counter()  # deferred (ambiguous) or every fact already stored: nothing new
    created = sum(1 for entity in output.get("entities", []) if entity.get("created"))
    facts, superseded = len(output["edges_created"]), len(output["superseded"])
    return Counter(episodes=1, entities=created, facts=facts,
                   audit_events=created + facts + superseded)


def _record_recall_save(output: dict[str, Any]) -> Counter:
    return Counter(recall_saves=1, audit_events=1) if output.get("recorded") else Counter()


def _memory_save(output: dict[str, Any]) -> Counter:
    """A new note, or an update (same row, one more version); an identical save adds none."""
    if output.get("created"):
        return Counter(notes=1, audit_events=1)
    return Counter(audit_events=1) if output.get("updated") else Counter()


def _forget(output: dict[str, Any]) -> Counter:
    """Rows deleted as the reply counts them; erased events stay, and one is appended."""
    # Built by hand: Counter arithmetic drops negative counts, update() keeps them.
    return Counter({"audit_events": 1, **{kind: -output.get(kind, 0) for kind in TABLES}})


# What a successful reply of each writing tool adds. A new tool that writes must be
# declared here: the ledger refuses to guess, so the suite fails until someone does.
WRITES: dict[str, Callable[[dict[str, Any]], Counter]] = {
    "write_episode": _write_episode,
    "record_recall_save": _record_recall_save,
    "memory_save": _memory_save,
    "forget": _forget,
}


def writes_of(tool: str, output: dict[str, Any]) -> Counter:
    if tool in WRITES:
        return WRITES[tool](output)
    if tool in TOOLS and TOOLS[tool].read_only:
        return Counter()
    raise AssertionError(f"tool {tool!r} is not read-only and the fuzz ledger does not know what "
                         "it writes; declare it in tests/fuzz/ledger.py WRITES")


class Ledger:
    def __init__(self, db: psycopg.Connection, accounts: list[int]):
        self.db = db
        self.accounts = accounts
        self.expected = self._counts()
        self.chain = {account: (0, GENESIS) for account in accounts}
        self.rows_checked = 0
        self.events_verified = 0
        for account in accounts:
            self._verify_chain(account)

    def _counts(self) -> dict[int, Counter]:
        rows = self.db.execute(COUNTS, [self.accounts]).fetchall()
        return {row[0]: Counter(dict(zip(KINDS, row[1:], strict=True))) for row in rows}

    def credit(self, account: int, tool: str, output: dict[str, Any]) -> None:
        self.expected[account].update(writes_of(tool, output))

    def check(self, what: str) -> None:
        """Compare every account's rows with the replies; verify the new audit events."""
        actual = self._counts()
        self.rows_checked += sum(sum(c.values()) for c in actual.values())
        problems = []
        for account in self.accounts:
            want, got = self.expected[account], actual[account]
            diff = {k: (want[k], got[k]) for k in KINDS if want[k] != got[k]}
            if diff:
                problems.append(f"account {account}: (reported, in the database) = {diff}")
        if problems:
            self.expected = actual  # resynchronise, so the next case is judged on its own
            raise AssertionError(f"after {what}, the database does not hold what the replies "
                                 "reported: " + "; ".join(problems))
        for account in self.accounts:
            self._verify_chain(account)

    def resync(self) -> None:
        """After a failed case: take the database as it is, chain included, and go on."""
        self.expected = self._counts()
        for account in self.accounts:
            head = self.db.execute(HEAD, [account]).fetchone()
            if head is not None:
                self.chain[account] = tuple(head)

    def _verify_chain(self, account: int) -> None:
        seq, last_hash = self.chain[account]
        rows = self.db.execute(EVENTS, [account, seq]).fetchall()
        events = [AuditEvent(**dict(zip(EVENT_FIELDS, row, strict=True))) for row in rows]
        check = verify_events(events, after_seq=seq, after_hash=last_hash)
        head = self.db.execute(HEAD, [account]).fetchone()
        self.events_verified += len(events)
        if events:
            self.chain[account] = (events[-1].seq, events[-1].hash)
        if not check.ok:
            raise AssertionError(f"account {account}'s audit chain breaks at seq "
                                 f"{check.broken_seq} (verified up to {seq})")
        if head is not None and tuple(head) != (check.last_seq, check.last_hash):
            raise AssertionError(f"account {account}'s audit chain head {tuple(head)} is not its "
                                 f"last event ({check.last_seq}, {check.last_hash})")
