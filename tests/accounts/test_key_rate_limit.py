"""A self-hosted box's operator gives a key its own requests a minute, in the admin or with
`echo-memory manage key_rate_limit`; the hosted service keeps each plan's rate. Each change
is audited; admission reads it (tests/mcp/test_rate_limit.py)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import ApiKey
from accounts.services import api_key_rate_limit_set
from audit.models import AuditEvent
from echomem.errors import Forbidden, ValidationFailed


@pytest.fixture
def self_hosted(settings):
    settings.SELF_HOSTED = True
    settings.RATE_LIMIT_PER_MINUTE = 0


def manage(*args: str) -> str:
    out = StringIO()
    call_command("key_rate_limit", *args, stdout=out)
    return out.getvalue()


def rate_of(actor) -> int | None:
    return ApiKey.objects.get(pk=actor.key.pk).requests_per_minute


def test_the_command_lists_shows_sets_and_resets(alice, bob, self_hosted):
    listed = manage()
    assert f"em_{alice.key.prefix}_" in listed and f"em_{bob.key.prefix}_" in listed
    assert "240 requests a minute (the default)" in listed
    assert "1,000 requests a minute (its own)" in manage(f"em_{alice.key.prefix}_", "1000")
    assert rate_of(alice) == 1000 and rate_of(bob) is None
    assert "(its own)" in manage(alice.plaintext)  # the whole key names it too
    assert "(the default)" in manage(alice.key.prefix, "default")
    assert rate_of(alice) is None


def test_each_change_is_audited_once(alice, self_hosted):
    manage(alice.key.prefix, "600")
    manage(alice.key.prefix, "600")  # no change, no event
    events = AuditEvent.objects.filter(action="key.rate_limit_changed")
    assert events.count() == 1
    assert events.get().after["requests_per_minute"] == {"from": None, "to": 600}


@pytest.mark.parametrize(("args", "says"), [
    (("0",), "from 1 to 100,000"), (("100001",), "from 1 to 100,000"),
    (("-5",), "from 1 to 100,000"), (("lots",), "is not a number"),
])
def test_a_bad_rate_is_refused_naming_the_fix(alice, self_hosted, args, says):
    with pytest.raises(CommandError, match=says):
        manage(alice.key.prefix, *args)
    assert rate_of(alice) is None


@pytest.mark.parametrize("given", ["nope", "em_000000000000_", "\x00", "a" * 500])
def test_an_unknown_key_is_refused_saying_how_to_list_them(db, self_hosted, given):
    with pytest.raises(CommandError, match=r"key_rate_limit|prefix"):
        manage(given, "10")


def test_a_revoked_key_is_not_found(alice, self_hosted):
    from accounts.services import api_key_revoke

    api_key_revoke(key=alice.key)
    with pytest.raises(CommandError, match="no active key"):
        manage(alice.key.prefix, "10")


def test_the_hosted_service_refuses_a_keys_own_limit(alice, settings):
    settings.SELF_HOSTED = False
    with pytest.raises(CommandError, match="ECHO_MEMORY_SELF_HOSTED=1"):
        manage(alice.key.prefix, "1000")
    with pytest.raises(Forbidden):
        api_key_rate_limit_set(key=alice.key, requests_per_minute=1000)
    assert rate_of(alice) is None


def test_the_service_checks_the_range_whoever_calls_it(alice, self_hosted):
    with pytest.raises(ValidationFailed) as refused:
        api_key_rate_limit_set(key=alice.key, requests_per_minute=0)
    assert refused.value.field == "requests_per_minute"



def _change(staff_client, actor, rate: str):
    key = actor.key
    return staff_client.post(f"/admin/accounts/apikey/{key.pk}/change/", {
        "name": key.name, "tool": key.tool, "default_memory": "",
        "requests_per_minute": rate})


def test_the_admin_sets_a_keys_limit_on_a_self_hosted_box(staff_client, alice, self_hosted):
    assert _change(staff_client, alice, "900").status_code == 302
    assert rate_of(alice) == 900
    assert AuditEvent.objects.filter(action="key.rate_limit_changed").count() == 1
    refused = _change(staff_client, alice, "0")
    assert refused.status_code == 200 and "greater than or equal to 1" in refused.content.decode()
    assert _change(staff_client, alice, "").status_code == 302
    assert rate_of(alice) is None


def test_the_hosted_admin_shows_the_limit_but_cannot_change_it(staff_client, alice, settings):
    settings.SELF_HOSTED = False
    page = staff_client.get(f"/admin/accounts/apikey/{alice.key.pk}/change/").content.decode()
    assert 'name="requests_per_minute"' not in page
    assert _change(staff_client, alice, "900").status_code == 302
    assert rate_of(alice) is None
