"""The one place where tool calls report the units they used. MCP and REST both call it."""

from __future__ import annotations

from accounts.principal import Principal


def meter(principal: Principal, tool: str, units: int) -> None:
    """Record `units` used by `tool` for the principal's account.

    Deliberately empty until billing lands (issue: billing): it will add the units
    to the account's monthly usage and refuse calls past the plan's allowance.
    Self-hosted boxes bill nothing, so this stays a no-op for them.
    """
    return None
