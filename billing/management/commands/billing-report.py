from __future__ import annotations

import csv
import json
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from billing.plans import month_of, next_month
from billing.report import report


def _month(value: str) -> date:
    try:
        year, month = value.split("-")
        return date(int(year), int(month), 1)
    except ValueError:
        raise CommandError(f"--month {value!r} is not a month: write it as YYYY-MM, "
                           "for example 2026-11") from None


class Command(BaseCommand):
    help = ("Units used per account per calendar month (UTC), summed from the usage records, "
            "with the ledger's figure beside it; exits 1 if any month's ledger disagrees.")

    def add_arguments(self, parser):
        parser.add_argument("--month", help="the first month to report, YYYY-MM (default: "
                                            "this month)")
        parser.add_argument("--months", type=int, default=1,
                            help="how many months from --month (default 1)")
        parser.add_argument("--format", choices=["table", "csv", "json"], default="table")

    def handle(self, *args, month: str | None, months: int, format: str, **options):
        if months < 1 or months > 120:
            raise CommandError("--months must be between 1 and 120")
        first = _month(month) if month else month_of()
        last = first
        for _ in range(months - 1):
            last = next_month(last)
        rows = report(first, last)
        if format == "json":
            self.stdout.write(json.dumps([{
                "account_id": r.account_id, "account": r.account,
                "month": r.month.isoformat()[:7], "units": r.units, "ledger": r.ledger,
            } for r in rows], indent=2))
        elif format == "csv":
            writer = csv.writer(self.stdout)
            writer.writerow(["month", "account_id", "account", "units", "ledger"])
            for r in rows:
                writer.writerow([r.month.isoformat()[:7], r.account_id, r.account, r.units,
                                 r.ledger])
        else:
            self._table(rows, first, last)
        if any(not r.consistent for r in rows):
            raise CommandError("the ledger disagrees with the usage records for the rows "
                               "marked !: investigate before invoicing")

    def _table(self, rows, first: date, last: date) -> None:
        span = first.isoformat()[:7] + ("" if first == last else f" to {last.isoformat()[:7]}")
        if not rows:
            self.stdout.write(f"No units used in {span}.")
            return
        width = max(len(r.account) for r in rows)
        self.stdout.write(f"{'month':<8} {'account':>8}  {'name':<{width}} {'units':>14}")
        for r in rows:
            mark = "" if r.consistent else f"  ! ledger says {r.ledger:,}"
            self.stdout.write(f"{r.month.isoformat()[:7]:<8} {r.account_id:>8}  "
                              f"{r.account:<{width}} {r.units:>14,}{mark}")
        total = sum(r.units for r in rows)
        self.stdout.write(f"{'total':<8} {'':>8}  {'':<{width}} {total:>14,}")
