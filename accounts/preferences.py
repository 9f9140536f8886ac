"""A person's own preferences: the time zone pages show times in.

The zone a page uses is the person's choice if they made one, else their browser's
(a cookie web/static/web/timezone.js sets), else UTC; web/time_zones.py applies it.
"""

from __future__ import annotations

import zoneinfo
from functools import lru_cache

from accounts.models import PersonSettings
from echomem.errors import ValidationFailed


@lru_cache(maxsize=1)
def time_zone_names() -> tuple[str, ...]:
    # Sorted once: the set zoneinfo builds by walking the tz database takes ~10 ms.
    return tuple(sorted(zoneinfo.available_timezones()))


@lru_cache(maxsize=1)
def _known_names() -> frozenset[str]:
    # Looked up on every page (web/time_zones.py): a set, not a scan of ~600 names.
    return frozenset(time_zone_names())


def known_time_zone(name: str | None) -> str | None:
    """`name` if it is an IANA zone this server knows, else None (never raises: the name
    may come from a cookie anyone can set)."""
    if not name or len(name) > 64 or name not in _known_names():
        return None
    return name


def chosen_time_zone(user_id) -> str:
    """The zone the person chose in their settings, or "" (follow the browser)."""
    return (PersonSettings.objects.filter(user_id=user_id).values_list("time_zone", flat=True)
            .first() or "")


def choose_time_zone(user, name: str) -> str:
    """Save the person's zone ("" follows the browser); an unknown name is refused."""
    name = name.strip()
    if name and known_time_zone(name) is None:
        raise ValidationFailed(f"{name[:64]!r} is not a time zone this server knows",
                               field="time_zone",
                               fix="pick one from the list (an IANA name such as "
                                   "Europe/Paris), or “Follow my browser”")
    PersonSettings.objects.update_or_create(user=user, defaults={"time_zone": name})
    return name
