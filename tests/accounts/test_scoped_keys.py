"""A key's expiry (at the boundary, with explicit clocks), its rotation with a grace
period, the network it was last used from, the rules a limited key is made by, and that
nothing a key reaches makes a key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.utils import timezone

from accounts.key_expiry import expiring_keys_mail
from accounts.key_rotation import api_key_rotate
from accounts.models import ApiKey
from accounts.principal import principal_from_key
from accounts.services import api_key_create
from audit.models import AuditEvent
from echomem.errors import AuthenticationFailed, ValidationFailed
from memories.graph.services import memory_create
from tests.routes import every_route

SECOND = timedelta(seconds=1)


def _key(actor, **limits):
    return api_key_create(account=actor.account, holder=actor.user, name="ci", tool="ci",
                          **limits)


def test_a_key_works_until_the_second_before_it_expires(alice):
    expires = timezone.now() + timedelta(days=3)
    _, plaintext = _key(alice, expires_at=expires)
    assert principal_from_key(plaintext, now=expires - SECOND).expires_at == expires
    for when in (expires, expires + SECOND, expires + timedelta(days=400)):
        with pytest.raises(AuthenticationFailed) as refused:
            principal_from_key(plaintext, now=when)
        assert refused.value.message == (f"this key expired on "
                                         f"{expires.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
        assert refused.value.fix and refused.value.field == "Authorization"


def test_an_expired_key_is_a_401_at_both_doors(alice, client):
    key, plaintext = _key(alice, expires_at=timezone.now() + timedelta(hours=1))
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - SECOND)
    headers = {"Authorization": f"Bearer {plaintext}"}
    rest = client.get("/api/v1/memories", headers=headers)
    assert rest.status_code == 401
    assert rest.json()["error"]["message"].startswith("this key expired on ")
    mcp = client.post("/mcp", data="{}", content_type="application/json",
                      headers={**headers, "Accept": "application/json, text/event-stream"})
    assert mcp.status_code == 401 and "expired on" in mcp.content.decode()


def test_rotation_keeps_both_secrets_inside_the_grace_then_only_the_new(alice):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    expires = timezone.now() + timedelta(days=30)
    key, old = _key(alice, read_only=True, default_memory=notes, memories=[notes],
                    expires_at=expires)
    before = principal_from_key(old)
    key, new = api_key_rotate(key=key, grace="1h", actor_id=alice.user.pk)
    assert new != old and new.split("_")[1] == old.split("_")[1]
    rotated = key.rotated_at
    after = principal_from_key(new)
    assert after == before  # same key, holder, tool, default memory and limits
    assert (after.read_only, after.memory_ids, after.expires_at) == (
        True, frozenset({notes.pk}), expires)
    assert principal_from_key(old, now=rotated + timedelta(hours=1) - SECOND) == before
    with pytest.raises(AuthenticationFailed, match="rotated: its old secret stopped working"):
        principal_from_key(old, now=rotated + timedelta(hours=1))
    assert principal_from_key(new, now=rotated + timedelta(hours=2)) == after
    event = AuditEvent.objects.get(account=alice.account, action="key.rotated")
    assert event.holder_id == alice.user.pk and event.after["grace"] == "1 hour"


def test_rotation_without_grace_kills_the_old_secret_at_once(alice):
    key, old = _key(alice)
    key, new = api_key_rotate(key=key, grace="none", actor_id=alice.user.pk)
    with pytest.raises(AuthenticationFailed, match="not valid"):
        principal_from_key(old)
    assert principal_from_key(new).key_id == key.pk


def test_a_second_rotation_ends_the_first_ones_grace(alice):
    key, first = _key(alice)
    key, second = api_key_rotate(key=key, grace="7d", actor_id=alice.user.pk)
    key, third = api_key_rotate(key=key, grace="7d", actor_id=alice.user.pk)
    with pytest.raises(AuthenticationFailed):
        principal_from_key(first)
    assert principal_from_key(second).key_id == principal_from_key(third).key_id == key.pk


def test_an_unknown_grace_is_refused_naming_the_choices(alice):
    key, _ = _key(alice)
    with pytest.raises(ValidationFailed) as refused:
        api_key_rotate(key=key, grace="forever", actor_id=alice.user.pk)
    assert refused.value.field == "grace" and "none, 1h, 1d, 7d" in refused.value.fix


@pytest.mark.parametrize(("address", "network"), [
    ("203.0.113.77", "203.0.113.0/24"),
    ("2001:db8:1234:5678::1", "2001:db8:1234::/48"),
    ("::ffff:198.51.100.9", "198.51.100.0/24"),
    (None, ""),
])
def test_the_last_use_records_the_network_not_the_address(alice, address, network):
    key, plaintext = _key(alice)
    principal_from_key(plaintext, client_address=address)
    assert ApiKey.objects.get(pk=key.pk).last_used_network == network


def test_a_request_records_its_network_with_last_use(alice, client):
    key, plaintext = _key(alice)
    client.get("/api/v1/memories", headers={"Authorization": f"Bearer {plaintext}"},
               REMOTE_ADDR="192.0.2.44")
    key.refresh_from_db()
    assert key.last_used_at is not None and key.last_used_network == "192.0.2.0/24"


@pytest.mark.parametrize(("limits", "field"), [
    ({"memories": []}, "memories"),
    ({"memories": "notes"}, "default_memory"),       # no default among them
    ({"memories": "notes", "default": "default"}, "default_memory"),
    ({"memories": "elsewhere", "default": "notes"}, "memories"),
    ({"expires_at": datetime(2020, 1, 1, tzinfo=UTC)}, "expires_on"),
])
def test_a_limited_key_must_be_coherent(alice, charlie, limits, field):
    notes = memory_create(account_id=alice.account.pk, name="notes")
    default = alice.account.default_memory
    elsewhere = memory_create(account_id=charlie.account.pk, name="elsewhere")
    named = {"notes": notes, "default": default, "elsewhere": elsewhere}
    arguments = {}
    if "memories" in limits:
        given = limits["memories"]
        arguments["memories"] = [named[given]] if isinstance(given, str) else given
    if "default" in limits:
        arguments["default_memory"] = named[limits["default"]]
    if "expires_at" in limits:
        arguments["expires_at"] = limits["expires_at"]
    count = ApiKey.objects.count()
    with pytest.raises(ValidationFailed) as refused:
        _key(alice, **arguments)
    assert refused.value.field == field and refused.value.fix
    assert ApiKey.objects.count() == count


def test_the_expiry_mail_goes_once_a_week_before(alice, bob):
    now = timezone.now()
    soon, _ = _key(alice, expires_at=now + timedelta(days=6))
    _key(alice, expires_at=now + timedelta(days=8))      # not yet
    gone, _ = _key(bob, expires_at=now + timedelta(days=2))
    gone.revoked_at = now
    ApiKey.objects.filter(pk=gone.pk).update(revoked_at=now)  # revoked: no mail
    alice.user.email = "alice@example.com"
    alice.user.save()
    assert expiring_keys_mail(now=now) == 1
    assert expiring_keys_mail(now=now) == 0
    assert expiring_keys_mail(now=now + timedelta(days=2)) == 1  # the 8-day key's turn
    assert [m.to for m in mail.outbox] == [["alice@example.com"]] * 2
    assert f"em_{soon.prefix}_" in mail.outbox[0].body
    assert "stops working at" in mail.outbox[0].body


def test_nothing_reachable_with_a_key_makes_a_key(alice, client):
    """A key never creates keys (nor grants): every route, sent a key and no session, by
    GET and by POST, leaves the keys and their audit events as they were."""
    keys, made = ApiKey.objects.count(), AuditEvent.objects.filter(action="key.created").count()
    known = {"name": "default", "key_id": str(alice.key.pk)}
    headers = {"Authorization": f"Bearer {alice.plaintext}"}
    for route in every_route():
        path = route.path(known)
        client.get(path, headers=headers)
        client.post(path, data={"name": "x", "tool": "x"}, headers=headers)
    assert ApiKey.objects.count() == keys
    assert AuditEvent.objects.filter(action="key.created").count() == made


def test_beat_and_the_single_boxs_housekeeping_both_send_the_expiry_mail(alice):
    from accounts.tasks import mail_expiring_keys
    from echomem import housekeeping
    from echomem.celery import BEAT_SCHEDULE

    assert BEAT_SCHEDULE["mail-expiring-keys"]["task"] == mail_expiring_keys.name
    alice.user.email = "alice@example.com"
    alice.user.save()
    _key(alice, expires_at=timezone.now() + timedelta(days=3))
    housekeeping.run_once()
    assert mail_expiring_keys() == 0  # mailed once, whoever runs it next
    housekeeping.run_once()
    assert len(mail.outbox) == 1
