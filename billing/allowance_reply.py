"""How many units an account has left this month, as the get_usage tool answers."""

from __future__ import annotations

from typing import Any

from accounts.principal import Principal
from billing.ledger import BILLING_PATH, allowance, metered
from echomem.public_url import public_url


def allowance_reply(principal: Principal) -> dict[str, Any]:
    if not metered():
        return {"metered": False, "plan": None, "month": None, "used": None, "allowed": None,
                "remaining": None, "resets_at": None, "requests_per_minute": None,
                "upgrade_url": None, "units": 0,
                "message": "This server is self-hosted: nothing is metered and there is no "
                           "monthly allowance."}
    current = allowance(principal.account_id)
    reset = current.resets_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    if current.remaining:
        message = (f"{current.remaining:,} of {current.allowed:,} units left this month on "
                   f"the {current.plan.name} plan; the count resets at {reset}.")
    else:
        message = (f"All {current.allowed:,} units of the {current.plan.name} plan are used: "
                   f"writes that create facts are refused and recalls return nothing until "
                   f"{reset}, or until the plan is upgraded at {public_url(BILLING_PATH)}.")
    return {"metered": True, "plan": current.plan.slug, "month": current.month.isoformat()[:7],
            "used": current.used, "allowed": current.allowed, "remaining": current.remaining,
            "resets_at": reset, "requests_per_minute": current.plan.requests_per_minute,
            "upgrade_url": public_url(BILLING_PATH), "units": 0, "message": message}
