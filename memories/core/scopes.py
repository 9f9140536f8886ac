"""Scope partitions: `shared` is the whole account, `solo` is one holder's one tool."""

from __future__ import annotations

from typing import Literal

from django.db.models import Q

from accounts.principal import Principal

Scope = Literal["shared", "solo"]
SHARED = "shared"


def partition_for(principal: Principal, scope: Scope) -> str:
    """The partition label every graph row carries and every query filters on."""
    if scope == "shared":
        return SHARED
    return principal.solo_partition


def visible_to_person(principal: Principal) -> Q:
    """What a person sees in the browser (DESIGN, "People in the browser"): the shared
    partition and the solo partitions of their own keys, whatever the tool; never another
    holder's."""
    return Q(partition=SHARED) | Q(partition__startswith=principal.solo_prefix)
