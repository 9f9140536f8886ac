"""Rotating a key: a new secret for the same key (its name, tool label, holder, default
memory, limits and rate stay), the old secret working for a grace period its holder
picks, then dead. The key keeps its id and prefix, so its usage, audit history and MCP
sessions carry on; only the secret part of `em_<prefix>_<secret>` changes."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts import key_cache, keys
from accounts.account_events import account_event
from accounts.models import ApiKey
from accounts.principal import Principal
from echomem.errors import NotFound, ValidationFailed

# How long the old secret may keep working, as the keys page offers it.
GRACE_PERIODS: dict[str, tuple[str, timedelta]] = {
    "none": ("none: the old secret stops now", timedelta(0)),
    "1h": ("1 hour", timedelta(hours=1)),
    "1d": ("1 day", timedelta(days=1)),
    "7d": ("7 days", timedelta(days=7)),
}


def rotatable_key(*, principal: Principal, key_id: int) -> ApiKey:
    """A live key of the principal's own, in their account: only its holder rotates a key
    (the new secret is shown to whoever rotates it). Anyone else's is NotFound."""
    key = (ApiKey.objects.filter(pk=key_id, account_id=principal.account_id,
                                 holder_id=principal.holder_id, revoked_at__isnull=True)
           .select_related("default_memory").first())
    if key is None:
        raise NotFound("there is no such API key of yours in this account", field="key",
                       fix="pick one of your own keys from the dashboard; an owner or admin "
                           "may revoke others' keys, only their holder rotates them")
    return key


@transaction.atomic
def api_key_rotate(*, key: ApiKey, grace: str, actor_id: int | None) -> tuple[ApiKey, str]:
    """A new secret for `key`; the plaintext is returned once. The secret it replaces works
    for `grace` (a GRACE_PERIODS name) more; a secret older than that one, still inside an
    earlier rotation's grace, stops at once."""
    if grace not in GRACE_PERIODS:
        raise ValidationFailed(f"{grace[:40]!r} is not a grace period", field="grace",
                               fix="choose one of: " + ", ".join(GRACE_PERIODS))
    period = GRACE_PERIODS[grace][1]
    locked = ApiKey.objects.select_for_update().filter(pk=key.pk,
                                                       revoked_at__isnull=True).first()
    if locked is None:
        raise NotFound("the key was revoked meanwhile", field="key",
                       fix="create a new key in the dashboard")
    now = timezone.now()
    issued = keys.issue(locked.prefix)  # same prefix: the key is found by it
    secret_hash = issued.secret_hash
    previous = locked.secret_hash if period else ""
    until = now + period if period else None
    ApiKey.objects.filter(pk=key.pk).update(
        secret_hash=secret_hash, previous_secret_hash=previous, previous_secret_until=until,
        rotated_at=now)
    account_event(account_id=key.account_id, actor_id=actor_id, action="key.rotated",
                  object_id=key.pk, after={
                      "key": f"em_{key.prefix}_…", "name": key.name, "tool": key.tool,
                      "holder": key.holder_id, "grace": GRACE_PERIODS[grace][0],
                      "old_secret_until": until.isoformat() if until else now.isoformat()})
    # As for a revocation: this process at once, the others within key_cache.TTL_SECONDS.
    key_cache.forget(key.prefix)
    transaction.on_commit(lambda: key_cache.forget(key.prefix))
    key.secret_hash, key.previous_secret_hash = secret_hash, previous
    key.previous_secret_until, key.rotated_at = until, now
    return key, issued.plaintext
