"""Units per account per month, from the usage records (the ledger's source of truth)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Sum

from accounts.models import Account
from billing.models import UsagePeriod, UsageRecord


@dataclass(frozen=True)
class ReportRow:
    account_id: int
    account: str  # "(deleted)" once the account is gone: its usage stays
    month: date
    units: int  # the sum of the usage records
    ledger: int  # the month's ledger row; equal to units unless something is wrong

    @property
    def consistent(self) -> bool:
        return self.units == self.ledger


def report(first: date, last: date) -> list[ReportRow]:
    """Every account with usage in the months first..last (first days), by month then units."""
    sums = (UsageRecord.objects.filter(month__gte=first, month__lte=last)
            .values("account_id", "month").annotate(units=Sum("units")))
    ledger = {(p.account_id, p.month): p.units for p in UsagePeriod.objects.filter(
        month__gte=first, month__lte=last)}
    keys = {(row["account_id"], row["month"]): row["units"] for row in sums}
    for key, units in ledger.items():
        if units:
            keys.setdefault(key, 0)
    names = dict(Account.objects.filter(pk__in={a for a, _ in keys})
                 .values_list("pk", "name"))
    rows = [ReportRow(account_id, names.get(account_id, "(deleted)"), month, units,
                      ledger.get((account_id, month), 0))
            for (account_id, month), units in keys.items()]
    return sorted(rows, key=lambda r: (r.month, -r.units, r.account_id))
