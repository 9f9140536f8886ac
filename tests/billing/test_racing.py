"""Racing calls against an allowance 5 units from its end: nothing overshoots, nothing is
partial, and another account is never held up."""

from __future__ import annotations

import json
import threading
from io import StringIO

from django.core.management import call_command
from django.db import connection
from django.db.models import Sum

from audit.models import AuditEvent
from billing.models import Plan, UsagePeriod, UsageRecord
from echomem.errors import AllowanceExhausted
from memories.models import Fact
from tests.billing.test_allowance import facts
from tools.calling import call_tool
from tools.registry import TOOLS

WRITERS = READERS = 20


def new(*pairs):
    """An episode whose names are all new (no similar-name check: seed1a is not seed2a)."""
    return facts(*pairs) | {"assume_new": True}


def run_all(calls):
    """Start every call at once (one thread and database connection each); their outcomes."""
    barrier = threading.Barrier(len(calls))
    outcomes: list = [None] * len(calls)

    def run(index, principal, tool, arguments):
        barrier.wait()
        try:
            outcomes[index] = call_tool(principal, TOOLS[tool], arguments)
        except AllowanceExhausted as refused:
            outcomes[index] = refused
        except Exception as failure:  # recorded, so the test reports it instead of hanging
            outcomes[index] = failure
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, *call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return outcomes


def test_racing_writers_and_readers_never_pass_the_allowance(transactional_db, alice, charlie):
    principal, other = alice.principal, charlie.principal
    for n in range(5):  # 10 units used, 10 facts to recall
        seeded = call_tool(principal, TOOLS["write_episode"], new(
            (f"seed{n}a", f"seed{n}b"), (f"seed{n}b", f"seed{n}c")))
        assert seeded["units"] == 2
    Plan.objects.filter(is_default=True).update(monthly_units=15)

    calls = [(principal, "write_episode", new((f"w{i}a", f"w{i}b"), (f"w{i}b", f"w{i}c")))
             for i in range(WRITERS)]
    calls += [(principal, "query_memory", {"scope": "shared", "query": "relates billing test",
                                           "top_k": 3}) for _ in range(READERS)]
    calls += [(other, "write_episode", new((f"c{i}a", f"c{i}b"))) for i in range(10)]
    outcomes = run_all(calls)
    unexpected = [o for o in outcomes if isinstance(o, Exception)
                  and not isinstance(o, AllowanceExhausted)]
    assert not unexpected, unexpected

    writes, reads, others = outcomes[:WRITERS], outcomes[WRITERS:-10], outcomes[-10:]
    stored = [w for w in writes if isinstance(w, dict)]
    returned = [r for r in reads if isinstance(r, dict)]
    # Nothing partial: a write stored both its facts or none of them.
    for i, outcome in enumerate(writes):
        count = Fact.objects.filter(source__name__in=[f"w{i}a", f"w{i}b"]).count()
        assert count == (2 if isinstance(outcome, dict) else 0)
        if isinstance(outcome, dict):
            assert outcome["units"] == 2
    for outcome in returned:
        assert 1 <= outcome["units"] == len(outcome["facts"]) <= 3
    spent = sum(w["units"] for w in stored) + sum(r["units"] for r in returned)
    assert spent <= 5
    assert len(stored) + len(returned) < WRITERS + READERS  # the rest were refused
    # The other account wrote all ten, whatever alice's calls were doing.
    assert all(isinstance(o, dict) and o["units"] == 1 for o in others)

    billed = UsageRecord.objects.filter(account_id=alice.account.pk)
    assert billed.aggregate(total=Sum("units"))["total"] == 10 + spent <= 15
    assert UsagePeriod.objects.get(account_id=alice.account.pk).units == 10 + spent
    # What was billed for writing is exactly what the audit log says was created.
    for account in (alice.account, charlie.account):
        written = UsageRecord.objects.filter(account_id=account.pk, tool="write_episode")
        created = AuditEvent.objects.filter(account_id=account.pk, action="fact.created")
        assert written.aggregate(total=Sum("units"))["total"] == created.count()

    out = StringIO()
    call_command("billing-report", "--format", "json", stdout=out)
    rows = {row["account_id"]: row for row in json.loads(out.getvalue())}
    for account in (alice.account, charlie.account):
        total = UsageRecord.objects.filter(account_id=account.pk).aggregate(
            total=Sum("units"))["total"]
        assert rows[account.pk]["units"] == rows[account.pk]["ledger"] == total
