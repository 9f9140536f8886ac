"""Repairs an operator runs on stored data (`echo-memory repair ...`).

Unreadable dates: before input dates were checked against what Python can hold, a
fact could be stored with `valid_at` or `invalid_at` outside years 1..9999 in UTC
(`9999-12-31T23:59:59-14:00` is year 10000 there). Postgres keeps such a value but
psycopg cannot return it as a datetime, so every read touching the fact failed. The
repair clears only the unreadable date(s) and records one audit event per fact.

The bad rows are handled in SQL alone: selecting their dates as datetimes is exactly
what fails, so only ids and the dates as text (in UTC) ever reach Python.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db import connection, transaction

from accounts.audit_chains import no_such_account
from accounts.models import Account
from accounts.principal import Principal
from audit.chain import Change, record
from memories.models import Memory

REPAIR_TOOL = "echo-memory repair"
DATE_REPAIRED = "fact.date_repaired"
DATE_FIELDS = ("valid_at", "invalid_at")
# Python's datetime holds years 1..9999: the readable instants are [lower, upper) in UTC.
READABLE_FROM = "'0001-01-01 00:00:00+00'::timestamptz"
READABLE_UNTIL = "'10000-01-01 00:00:00+00'::timestamptz"


def _unreadable(column: str) -> str:
    """SQL true when `column` holds a date psycopg cannot load (NULL when it is NULL)."""
    return f"({column} < {READABLE_FROM} OR {column} >= {READABLE_UNTIL})"


ANY_UNREADABLE = " OR ".join(_unreadable(f"f.{name}") for name in DATE_FIELDS)


@dataclass(frozen=True)
class RepairedFact:
    fact_id: str
    memory_id: int
    memory_name: str
    partition: str
    # The unreadable field(s) and what they held, as Postgres prints them in UTC.
    before: dict[str, str]


@dataclass(frozen=True)
class AccountRepair:
    account_id: int
    account_name: str
    facts: list[RepairedFact]


def repair_unreadable_dates(*, account_id: int | None = None,
                            dry_run: bool = False) -> list[AccountRepair]:
    """Clear every fact date outside Python's range, one transaction per account.

    Superseded facts count too (they stay queryable). With `dry_run`, nothing is
    changed or recorded; the reply says what would be repaired. Accounts with
    nothing to repair are left out of the reply.
    """
    if account_id is not None and not Account.objects.filter(pk=account_id).exists():
        raise no_such_account(account_id)
    repairs = []
    for affected_id, name in _affected_accounts(account_id):
        with transaction.atomic():
            facts = _unreadable_facts(affected_id, lock=not dry_run)
            if facts and not dry_run:
                _clear_and_record(affected_id, facts)
        if facts:
            repairs.append(AccountRepair(affected_id, name, facts))
    return repairs


def _affected_accounts(account_id: int | None) -> list[tuple[int, str]]:
    only = "a.id = %s AND" if account_id is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.id, a.name FROM accounts_account a WHERE {only} EXISTS ("
            "SELECT 1 FROM memories_fact f JOIN memories_memory m ON m.id = f.memory_id "
            f"WHERE m.account_id = a.id AND ({ANY_UNREADABLE})) ORDER BY a.id",
            [account_id] if account_id is not None else [],
        )
        return cursor.fetchall()


def _unreadable_facts(account_id: int, *, lock: bool) -> list[RepairedFact]:
    """The account's facts with an unreadable date, locked until commit when repairing."""
    texts = ", ".join(f"CASE WHEN {_unreadable(f'f.{name}')} THEN f.{name}::text END"
                      for name in DATE_FIELDS)
    with connection.cursor() as cursor:
        # The text form follows the session time zone: UTC, whatever the server default.
        cursor.execute("SET LOCAL TimeZone = 'UTC'")
        cursor.execute(
            f"SELECT f.id, f.memory_id, m.name, f.partition, {texts} FROM memories_fact f "
            "JOIN memories_memory m ON m.id = f.memory_id "
            f"WHERE m.account_id = %s AND ({ANY_UNREADABLE}) "
            f"ORDER BY m.name, f.partition, f.id{' FOR UPDATE OF f' if lock else ''}",
            [account_id],
        )
        rows = cursor.fetchall()
    return [
        RepairedFact(str(fact_id), memory_id, memory_name, partition,
                     {name: value for name, value in zip(DATE_FIELDS, values, strict=True)
                      if value is not None})
        for fact_id, memory_id, memory_name, partition, *values in rows
    ]


def _clear_and_record(account_id: int, facts: list[RepairedFact]) -> None:
    clears = ", ".join(f"{name} = CASE WHEN {_unreadable(name)} THEN NULL ELSE {name} END"
                       for name in DATE_FIELDS)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE memories_fact SET {clears} WHERE id = ANY(%s::uuid[])",
                       [[fact.fact_id for fact in facts]])
    # No key or person did this: the server's maintenance command is the actor.
    actor = Principal(account_id=account_id, holder_id=None, tool=REPAIR_TOOL)
    memories = Memory.objects.in_bulk({fact.memory_id for fact in facts})
    by_place: dict[tuple[int, str], list[Change]] = defaultdict(list)
    for fact in facts:
        by_place[fact.memory_id, fact.partition].append(Change(
            DATE_REPAIRED, fact.fact_id, before=dict(fact.before),
            after={name: None for name in fact.before}))
    for (memory_id, partition), changes in by_place.items():
        record(actor=actor, memory=memories[memory_id], partition=partition,
               session_id="", changes=changes)
