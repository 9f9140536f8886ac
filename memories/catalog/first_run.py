"""How far a new account has come on the dashboard's first-run checklist: a memory picked,
a way in for an agent, the first write seen. Only EXISTS queries (two to seven, fewest once
a write has arrived), so the dashboard and its polling partial can ask on every request.

The rules, as docs/dashboard.md states them:
- memory: the account has a memory besides the `default` its creation made, or a live key
  or connected app names a default memory of its own (one was picked for an agent), or
  the first write arrived (the agent wrote to one, so one was picked). Every account
  starts with `default`, so "a memory exists" would tick for everyone.
- agent: the account has a live key (not revoked, not expired) or a live connected app.
- write: the person can see a stored episode or note in any of the account's memories
  (the shared partition or their own keys' solo ones, as the dashboard's counts).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from accounts.models import ApiKey, Connection
from accounts.principal import Principal
from memories.core.scopes import visible_to_person
from memories.models import Episode, Memory, Note


@dataclass(frozen=True)
class FirstRun:
    memory: bool
    agent: bool
    write: bool

    @property
    def done(self) -> bool:
        return self.memory and self.agent and self.write

    @property
    def state(self) -> str:
        """The steps as a page last showed them, e.g. "110": its polling sends it back, and
        an unchanged answer is not sent again."""
        return "".join("1" if step else "0" for step in (self.memory, self.agent, self.write))


def _live_keys(account_id: int):
    return ApiKey.objects.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
        account_id=account_id, revoked_at__isnull=True)


def _live_connections(account_id: int):
    return Connection.objects.filter(account_id=account_id, revoked_at__isnull=True)


def first_write_seen(principal: Principal) -> bool:
    visible = visible_to_person(principal)
    account = principal.account_id
    return (Episode.objects.filter(visible, memory__account_id=account).exists()
            or Note.objects.filter(visible, memory__account_id=account).exists())


def first_run(principal: Principal) -> FirstRun:
    account = principal.account_id
    write = first_write_seen(principal)
    agent = (_live_keys(account).exists()
             or _live_connections(account).exists())
    memory = write or (
        Memory.objects.filter(account_id=account).order_by("pk")[1:2].exists()
        or _live_keys(account).filter(default_memory__isnull=False).exists()
        or _live_connections(account).filter(default_memory__isnull=False).exists())
    return FirstRun(memory=memory, agent=agent, write=write)
