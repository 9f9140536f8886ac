"""An account's secret redaction as people see and change it: owners and admins switch it
on or off and keep the account's own patterns; members read them. What redaction does to
text is the engine's (memories/redaction.py); this module adds who may, and the audit."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from accounts.models import Account, Membership
from accounts.principal import Principal
from echomem.errors import Forbidden
from memories.audit import account_event
from memories.redaction import redaction_settings_save, redactor_with

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
