"""A cache for counters only, kept in PostgreSQL, whose add and incr are each one statement.

django-ratelimit counts with `add(key, 1)` then `incr(key)`; Django's DatabaseCache reads
and then writes, so two requests at once can both read 4 and both write 5. Here the row
lock of a single INSERT .. ON CONFLICT or UPDATE .. RETURNING orders them instead.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connection
from django.utils import timezone

from web.models import RateCounter

TABLE = RateCounter._meta.db_table
# Expired windows are swept now and then, on a new window, not on every request.
SWEEP_CHANCE = 0.01


def counters_expire() -> int:
    """Delete the counters whose window has passed; returns how many."""
    return RateCounter.objects.filter(expires__lt=timezone.now()).delete()[0]


class CountingCache(BaseCache):
    def __init__(self, location: str, params: dict):
        super().__init__(params)

    def _expiry(self, timeout):
        seconds = self.get_backend_timeout(timeout)
        if seconds is None:
            return timezone.now() + timedelta(days=3650)
        return datetime.fromtimestamp(seconds, tz=UTC)

    @staticmethod
    def _require_int(value) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"this cache holds counters only, not {type(value).__name__}")
        return value

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        if random.random() < SWEEP_CHANCE:
            counters_expire()
        with connection.cursor() as cursor:
            # A row whose window has passed is taken over, as if it were not there.
            cursor.execute(
                f"INSERT INTO {TABLE} (key, count, expires) VALUES (%s, %s, %s) "
                f"ON CONFLICT (key) DO UPDATE SET count = EXCLUDED.count, "
                f"expires = EXCLUDED.expires WHERE {TABLE}.expires < now() RETURNING 1",
                [key, self._require_int(value), self._expiry(timeout)])
            return cursor.fetchone() is not None

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> None:
        key = self.make_and_validate_key(key, version=version)
        RateCounter.objects.update_or_create(
            key=key, defaults={"count": self._require_int(value),
                               "expires": self._expiry(timeout)})

    def incr(self, key, delta=1, version=None) -> int:
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {TABLE} SET count = count + %s WHERE key = %s AND expires >= now() "
                "RETURNING count", [delta, key])
            row = cursor.fetchone()
        if row is None:
            raise ValueError(f"Key '{key}' not found")  # Django's cache contract
        return row[0]

    def get(self, key, default=None, version=None):
        key = self.make_and_validate_key(key, version=version)
        found = RateCounter.objects.filter(key=key, expires__gte=timezone.now()).values_list(
            "count", flat=True).first()
        return default if found is None else found

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        return bool(RateCounter.objects.filter(key=key, expires__gte=timezone.now()).update(
            expires=self._expiry(timeout)))

    def delete(self, key, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        return RateCounter.objects.filter(key=key).delete()[0] > 0

    def clear(self) -> None:
        RateCounter.objects.all().delete()
