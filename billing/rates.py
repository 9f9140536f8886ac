"""Each key's request rate: the operator's override, else the account's plan (hosted), else
the self-hosted default."""

from __future__ import annotations

import time

from django.conf import settings

from billing.ledger import metered
from billing.plans import effective_plan

SELF_HOSTED_RATE = 240
# A plan change reaches every process's rate limit within this many seconds; meanwhile a
# request costs no query for it. (Units are never cached: the ledger decides those.)
PLAN_RATE_TTL_SECONDS = 5.0
_cached: dict[int, tuple[float, int]] = {}


def requests_per_minute(account_id: int) -> int:
    if settings.RATE_LIMIT_PER_MINUTE:
        return settings.RATE_LIMIT_PER_MINUTE
    if not metered():
        return SELF_HOSTED_RATE
    now = time.monotonic()
    hit = _cached.get(account_id)
    if hit is not None and hit[0] > now:
        return hit[1]
    rate = effective_plan(account_id).requests_per_minute
    if len(_cached) > 10_000:
        _cached.clear()
    _cached[account_id] = (now + PLAN_RATE_TTL_SECONDS, rate)
    return rate


def forget(account_id: int | None = None) -> None:
    """Drop cached rates (this process): after a plan change handled here, and in tests."""
    if account_id is None:
        _cached.clear()
    else:
        _cached.pop(account_id, None)
