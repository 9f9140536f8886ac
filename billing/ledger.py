"""The allowance check and the ledger increment: one locked step per charge.

Every charge of an account locks that account's row of the month (INSERT .. ON CONFLICT
DO UPDATE takes the row lock and returns the units as the last committed charge left
them), decides against the plan, adds the units and a usage record, all inside the
caller's transaction: a write's units commit with its facts or not at all, and racing
calls of one account queue on one row while other accounts never wait on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.principal import Principal
from billing import alerts
from billing.models import Plan, UsagePeriod
from billing.plans import effective_plan, month_of, resets_at
from echomem.errors import AllowanceExhausted
from echomem.public_url import public_url
from memories.models import Memory

BILLING_PATH = "/billing"
PAID_WITHOUT_KEY = frozenset({"import_memory"})


@dataclass(frozen=True)
class Allowance:
    plan: Plan
    month: date
    used: int

    @property
    def allowed(self) -> int:
        return self.plan.monthly_units

    @property
    def remaining(self) -> int:
        return max(0, self.allowed - self.used)

    @property
    def resets_at(self) -> datetime:
        return resets_at(self.month)


def metered() -> bool:
    """Whether this installation counts units at all (not on a self-hosted box)."""
    return not settings.SELF_HOSTED


def allowance(account_id: int, *, now: datetime | None = None) -> Allowance:
    """The account's plan and units used this month, unlocked (for display)."""
    month = month_of(now)
    used = (UsagePeriod.objects.filter(account_id=account_id, month=month)
            .values_list("units", flat=True).first()) or 0
    return Allowance(effective_plan(account_id, now=now), month, used)


class LedgerMeter:
    """The meter the engine calls (memories.core.metering); installed by BillingConfig.ready."""

    def charge(self, principal: Principal, memory: Memory, tool: str, costs: Sequence[int],
               *, whole: bool) -> int:
        # People reading their own memory in the dashboard hold no key or grant: units are what
        # agents write and recall through the API, and what any import writes (a file
        # imported in the dashboard stores facts as an agent would).
        if not metered() or (not principal.is_agent_credential and tool not in PAID_WITHOUT_KEY):
            return len(costs)
        # No savepoint (two round trips on every read): a refusal raised here ends the
        # caller's transaction, which callers let it do.
        with transaction.atomic(savepoint=False):
            return _charge(principal, memory, tool, costs, whole=whole)


def _charge(principal: Principal, memory: Memory, tool: str, costs: Sequence[int], *,
            whole: bool) -> int:
    now = timezone.now()
    month = month_of(now)
    plan = effective_plan(principal.account_id, now=now)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO billing_usageperiod (account_id, month, units) VALUES (%s, %s, 0) "
            "ON CONFLICT (account_id, month) DO UPDATE SET units = billing_usageperiod.units "
            "RETURNING id, units, alerted_80_at IS NOT NULL, alerted_100_at IS NOT NULL",
            [principal.account_id, month])
        period_id, used, alerted_80, alerted_100 = cursor.fetchone()
    current = Allowance(plan, month, used)
    if whole:
        count, paid = (len(costs), sum(costs)) if sum(costs) <= current.remaining else (0, 0)
    else:
        running = list(itertools.accumulate(costs))
        count = sum(1 for total in running if total <= current.remaining)
        paid = running[count - 1] if count else 0
    if count == 0:
        raise _exhausted(current, sum(costs) if whole else costs[0], whole=whole)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE billing_usageperiod SET units = units + %s WHERE id = %s; "
            "INSERT INTO billing_usagerecord (account_id, month, at, key_id, key_prefix, "
            "memory_id, memory_name, tool, units) SELECT %s, %s, %s, %s, "
            "coalesce((SELECT prefix FROM accounts_apikey WHERE id = %s), ''), %s, %s, %s, %s",
            [paid, period_id, principal.account_id, month, now, principal.key_id,
             principal.key_id, memory.pk, memory.name, tool, paid])
    alerts.on_charge(period_id, principal.account_id, before=used, after=used + paid,
                     allowed=current.allowed, alerted_80=alerted_80, alerted_100=alerted_100)
    return count


def _exhausted(current: Allowance, wanted: int, *, whole: bool) -> AllowanceExhausted:
    reset = current.resets_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    url = public_url(BILLING_PATH)
    if whole:
        what = (f"this write needs {wanted} unit{'s' if wanted != 1 else ''} and "
                f"{current.remaining} remain{'s' if current.remaining == 1 else ''}; nothing "
                "was stored")
    else:
        what = "no units remain, so no facts can be returned"
    return AllowanceExhausted(
        f"monthly unit allowance reached: {current.used:,} of {current.allowed:,} units used "
        f"on the {current.plan.name} plan; {what}. The allowance resets at {reset} (UTC). "
        f"Upgrade at {url}",
        used=current.used, allowed=current.allowed, resets_at=reset, upgrade_url=url,
        field="units",
        fix=f"upgrade the plan at {url}, wait until {reset}, or write fewer facts per call"
            if whole else f"upgrade the plan at {url} or wait until {reset}")
