"""How the engine asks to be paid: it reports the units of what it is about to store or hand
back, inside the transaction that does it; whoever is installed decides.

The engine never imports billing. The billing app installs its meter when Django starts;
until something is installed (and on a self-hosted box, where the installed meter
charges nothing) every call is free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from django.db import transaction

from accounts.principal import Principal
from echomem import metrics


class MeteredMemory(Protocol):
    """What a meter needs of the memory a call reads or writes (memories.models.Memory is
    one); a protocol, so the engine's bottom room imports no model."""

    pk: int
    name: str


class Meter(Protocol):
    def charge(self, principal: Principal, memory: MeteredMemory, tool: str, costs: Sequence[int],
               *, whole: bool) -> int:
        """Pay for the longest prefix of `costs` (units per item, in reply order) the
        allowance covers and return its length; run inside the caller's transaction, so
        the charge commits or rolls back with the work. `whole`: all items or
        AllowanceExhausted. Raises AllowanceExhausted when not even one item fits."""
        ...


class Free:
    def charge(self, principal: Principal, memory: MeteredMemory, tool: str, costs: Sequence[int],
               *, whole: bool) -> int:
        return len(costs)


_meter: Meter = Free()


def install(meter: Meter) -> None:
    global _meter
    _meter = meter


def charge(principal: Principal, memory: MeteredMemory, tool: str, costs: Sequence[int], *,
           whole: bool = False) -> int:
    """How many of the items the caller may store or return (see Meter.charge)."""
    if not any(costs):
        return len(costs)
    paid = _meter.charge(principal, memory, tool, costs, whole=whole)
    units = sum(costs[:paid])
    # Counted only if the work they pay for commits (right away outside a transaction).
    transaction.on_commit(lambda: metrics.units_committed(tool, units))
    return paid


def cut_short(returned: int, found: int, *, what: str = "facts",
              rule: str = "one unit per fact returned") -> str:
    """What a read says when the allowance covered only part of what it found."""
    return (f"Returned {returned} of {found} {what}: the account's monthly unit allowance ran "
            f"out ({rule}). get_usage tells when it resets; the account's billing page "
            "upgrades it.")
