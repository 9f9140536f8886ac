"""An account's secret redaction as people see and change it: owners and admins switch it
on or off and keep the account's own patterns; members read them. What redaction does to
text is redaction/redactor.py's; this module keeps an account's settings, says who may
change them, audits the change and gives each write its account's redactor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from django.db import transaction

from accounts.account_events import account_event
from accounts.models import Account, Membership
from accounts.principal import Principal
from echomem import bulk
from echomem.errors import Forbidden
from redaction.redactor import Redactor, check_user_patterns, redactor_with

MAY_CHANGE = {Membership.Role.OWNER, Membership.Role.ADMIN}
PREVIEW_CHARS = 5_000


@dataclass(frozen=True)
class RedactionSettings:
    enabled: bool
    patterns: list[str]


def redaction_settings_of(principal: Principal) -> RedactionSettings:
    enabled, patterns = (Account.objects.filter(pk=principal.account_id)
                         .values_list("redact_secrets", "redaction_patterns").get())
    return RedactionSettings(enabled, list(patterns or []))


@transaction.atomic
def redaction_settings_change(*, principal: Principal, actor_role: str, enabled: bool,
                              patterns: list[str]) -> RedactionSettings:
    """Store the settings (bad patterns refused, nothing saved) and audit what changed; the
    event names how many patterns, not the patterns, which may describe secrets' shapes."""
    if actor_role not in MAY_CHANGE:
        raise Forbidden("members cannot change secret redaction", field="redact_secrets",
                        fix="ask an owner or admin of the account")
    Account.objects.select_for_update().filter(pk=principal.account_id).get()
    before = redaction_settings_of(principal)
    kept = redaction_settings_save(principal.account_id, enabled=enabled, patterns=patterns)
    after = RedactionSettings(enabled, kept)
    if after != before:
        account_event(account_id=principal.account_id, actor_id=principal.holder_id,
                      action="account.redaction_changed", object_id=principal.account_id,
                      after={"enabled": enabled, "was_enabled": before.enabled,
                             "patterns": len(kept), "patterns_before": len(before.patterns)})
    return after


def redaction_preview(sample: str, settings: RedactionSettings) -> tuple[str, int]:
    """What `sample` would be stored as under `settings` (at most PREVIEW_CHARS of it)."""
    return redactor_with(enabled=settings.enabled,
                         patterns=settings.patterns).text(sample[:PREVIEW_CHARS])


def redactor_for(account_id: int) -> Redactor:
    """The account's redactor: on unless the account switched it off, plus its own patterns."""
    # Read on every write: one plain statement, not an ORM query (which cost five times
    # as much as the statement itself).
    rows = bulk.execute(f"SELECT redact_secrets, redaction_patterns FROM "
                        f"{Account._meta.db_table} WHERE id = %s", [account_id])
    if not rows:
        return Redactor()
    enabled, patterns = rows[0]
    if isinstance(patterns, str):  # Django's connection reads jsonb as text
        patterns = json.loads(patterns)
    return _redactor(enabled, tuple(patterns or ()))


@lru_cache(maxsize=256)
def _redactor(enabled: bool, patterns: tuple[str, ...]) -> Redactor:
    """Accounts with the same settings share one (a Redactor is immutable)."""
    return redactor_with(enabled=enabled, patterns=patterns)


def redaction_settings_save(account_id: int, *, enabled: bool, patterns: object) -> list[str]:
    """Store an account's redaction settings; bad patterns are refused, nothing is saved."""
    kept = check_user_patterns(patterns)
    Account.objects.filter(pk=account_id).update(redact_secrets=enabled,
                                                 redaction_patterns=kept)
    return kept
