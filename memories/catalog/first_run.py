"""How far a new account has come on the dashboard's first-run checklist: a memory picked,
a way in for an agent, the first write seen. One query of EXISTS subqueries, each stopping
at its first row, so the dashboard and its polling partial can ask on every request.

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

from django.db.models import Exists, Q
from django.utils import timezone

from accounts.models import Account, ApiKey, Connection
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


def first_run(principal: Principal) -> FirstRun:
    """One query: each rule an EXISTS beside the others, on the account's row."""
    account = principal.account_id
    visible = visible_to_person(principal)
    keys = ApiKey.objects.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
        account_id=account, revoked_at__isnull=True)
    connections = Connection.objects.filter(account_id=account, revoked_at__isnull=True)
    row = Account.objects.filter(pk=account).values(
        episode=Exists(Episode.objects.filter(visible, memory__account_id=account)),
        note=Exists(Note.objects.filter(visible, memory__account_id=account)),
        key=Exists(keys), connection=Exists(connections),
        # a memory besides the first: the `default` the account's creation made
        another=Exists(Memory.objects.filter(account_id=account).order_by("pk")[1:]),
        key_names=Exists(keys.filter(default_memory__isnull=False)),
        app_names=Exists(connections.filter(default_memory__isnull=False)),
    ).get()
    write = row["episode"] or row["note"]
    return FirstRun(memory=write or row["another"] or row["key_names"] or row["app_names"],
                    agent=row["key"] or row["connection"], write=write)
