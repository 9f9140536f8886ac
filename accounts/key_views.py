"""Keys as the keys page shows them: each with its limits in words, when it expires (and
whether that is within the warning's week), where it was last used, and a rotation's old
secret still working."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from accounts.key_expiry import EXPIRY_WARNING
from accounts.models import ApiKey
from accounts.principal import Principal


@dataclass(frozen=True)
class KeyView:
    key: ApiKey
    memory_names: list[str] | None  # None: every memory of the account
    expires_soon: bool
    old_secret_until: datetime | None  # a rotation's old secret still works until then
    rotatable: bool  # only its holder rotates a key


def keys_with_limits(principal: Principal, keys: Iterable[ApiKey], *,
                     now: datetime | None = None) -> list[KeyView]:
    """The page's keys with the names of the memories they are limited to (one query for
    the page, whatever its length)."""
    now = now or timezone.now()
    keys = list(keys)
    limited = {pk for key in keys for pk in (key.memory_ids or ())}
    # The engine's Memory, reached through the key's foreign key: tenancy imports no engine.
    memories = ApiKey._meta.get_field("default_memory").related_model
    names = dict(memories.objects.filter(account_id=principal.account_id, pk__in=limited)
                 .values_list("pk", "name")) if limited else {}
    return [KeyView(
        key=key,
        memory_names=(None if key.memory_ids is None else
                      sorted(names[pk] for pk in key.memory_ids if pk in names)),
        expires_soon=key.expires_at is not None and now < key.expires_at <= now + EXPIRY_WARNING,
        old_secret_until=(key.previous_secret_until if key.previous_secret_until
                          and key.previous_secret_until > now else None),
        rotatable=key.holder_id == principal.holder_id,
    ) for key in keys]


def keys_expiring_soon(keys: QuerySet[ApiKey], *, now: datetime | None = None) -> list[ApiKey]:
    """Of `keys` (a list's whole query, not one page of it), those that expire within
    EXPIRY_WARNING, soonest first: the page warns of each, whichever page lists it."""
    now = now or timezone.now()
    return list(keys.filter(expires_at__gt=now, expires_at__lte=now + EXPIRY_WARNING)
                .order_by("expires_at", "pk"))
