"""Scope partitions: `shared` is the whole account, `solo` is one holder's one tool."""

from __future__ import annotations

from typing import Literal

from accounts.principal import Principal

Scope = Literal["shared", "solo"]
SHARED = "shared"


def partition_for(principal: Principal, scope: Scope) -> str:
    """The partition label every graph row carries and every query filters on."""
    if scope == "shared":
        return SHARED
    return principal.solo_partition
