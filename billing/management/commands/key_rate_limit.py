"""`echo-memory manage key_rate_limit [KEY [RATE]]`: a self-hosted box's per-key limits.

Billing's command, not tenancy's: a key without its own limit gets billing's self-hosted
rate, which the listing shows (accounts imports no billing)."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts import keys
from accounts.models import KEY_RATE_MAX, ApiKey
from accounts.services import api_key_rate_limit_set
from billing.rates import SELF_HOSTED_RATE
from echomem.errors import EchoError

DEFAULT_WORDS = {"default", "none", "-"}
PREFIX = re.compile(r"[0-9a-f]{12}")


class Command(BaseCommand):
    help = ("Requests a minute per API key on a self-hosted box (ECHO_MEMORY_SELF_HOSTED=1), "
            "/mcp and /api/v1 together. No argument: list the active keys and their limits. "
            "KEY (its prefix, `em_<prefix>_`, or the whole key): show one. KEY RATE: set it, "
            f"1 to {KEY_RATE_MAX:,}; KEY default: back to the box's default.")

    def add_arguments(self, parser):
        parser.add_argument("key", nargs="?", help="the key's prefix, em_<prefix>_, or the key")
        parser.add_argument("rate", nargs="?",
                            help="requests a minute, or `default` for the box's default")

    def handle(self, *args, key: str | None, rate: str | None, **options):
        if key is None:
            for found in (ApiKey.objects.filter(revoked_at__isnull=True)
                          .select_related("account", "holder").order_by("account_id", "pk")):
                self.stdout.write(self._line(found))
            return
        found = self._key(key)
        if rate is not None:
            try:
                found = api_key_rate_limit_set(key=found, requests_per_minute=_rate(rate))
            except EchoError as refused:
                raise CommandError(f"{refused.message}: {refused.fix}") from None
        self.stdout.write(self._line(found))

    def _line(self, key: ApiKey) -> str:
        return (f"em_{key.prefix}_  {key.account.name} / {key.holder.get_username()} / "
                f"{key.tool}: {_described(key.requests_per_minute)}")

    def _key(self, given: str) -> ApiKey:
        text = given.strip()
        parsed = keys.parse(text)
        prefix = parsed[0] if parsed else text.removeprefix("em_").rstrip("_")
        if not PREFIX.fullmatch(prefix):
            raise CommandError(f"{given!r} names no key: give its prefix (12 hex characters, "
                               "as the dashboard shows em_<prefix>_...), or the whole key")
        found = (ApiKey.objects.filter(prefix=prefix, revoked_at__isnull=True)
                 .select_related("account", "holder").first())
        if found is None:
            raise CommandError(f"no active key has the prefix {prefix!r}: run "
                               "`echo-memory manage key_rate_limit` to list them")
        return found


def _rate(text: str) -> int | None:
    if text.strip().lower() in DEFAULT_WORDS:
        return None
    try:
        return int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise CommandError(f"rate {text!r} is not a number: give requests a minute, 1 to "
                           f"{KEY_RATE_MAX:,}, or `default`") from None


def _described(rate: int | None) -> str:
    if rate is not None:
        return f"{rate:,} requests a minute (its own)"
    if settings.RATE_LIMIT_PER_MINUTE:
        return f"{settings.RATE_LIMIT_PER_MINUTE:,} requests a minute (the box's default)"
    return f"{SELF_HOSTED_RATE:,} requests a minute (the default)"
