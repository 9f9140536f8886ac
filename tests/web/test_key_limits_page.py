"""The keys page and scoped keys: limits chosen at creation and shown in the list, the
last use's network, the expiry warning, rotation with a grace period; another tenant's key
is a 404 and a bad choice is refused next to its field."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import ApiKey
from accounts.principal import principal_from_key
from accounts.services import api_key_create
from audit.models import AuditEvent
from echomem.errors import AuthenticationFailed
from memories.graph.services import memory_create
from tests.mcp.conftest import fake_clock  # noqa: F401

SECRET = re.compile(r'value="(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})"')


def _tomorrow_and_more(days: int) -> str:
    return (timezone.now() + timedelta(days=days)).date().isoformat()


def test_a_key_made_with_limits_carries_them_and_the_list_shows_them(client, alice):
    support = memory_create(account_id=alice.account.pk, name="support")
    wiki = memory_create(account_id=alice.account.pk, name="wiki")
    client.force_login(alice.user)
    form = client.get("/keys/new/").content.decode()
    assert 'type="checkbox" name="read_only"' in form and 'type="date"' in form
    assert f'name="memories" value="{wiki.pk}"' in form
    expires_on = _tomorrow_and_more(30)
    made = client.post("/keys/new/", {"name": "support bot", "tool": "support-bot",
                                      "default_memory": support.pk, "read_only": "on",
                                      "memories": [support.pk, wiki.pk],
                                      "expires_on": expires_on})
    assert made.status_code == 302, made.context["form"].errors
    plaintext = SECRET.search(client.get(made["Location"]).content.decode())[1]
    principal = principal_from_key(plaintext)
    assert principal.read_only and principal.memory_ids == frozenset({support.pk, wiki.pk})
    assert principal.expires_at.date().isoformat() == expires_on
    assert principal.default_memory_id == support.pk
    page = client.get("/dashboard/").content.decode()
    assert "read only" in page
    assert "only <code>support</code>, <code>wiki</code>" in page
    assert f"expires {expires_on}" in page
    assert "within a week" not in page


@pytest.mark.parametrize(("data", "field"), [
    ({"memories": ["support"]}, "default_memory"),                # no default among them
    ({"memories": ["support"], "default_memory": "wiki"}, "default_memory"),
    ({"memories": ["9" * 30]}, "memories"),
    ({"expires_on": "yesterday"}, "expires_on"),
    ({"expires_on": "2020-01-01"}, "expires_on"),
    ({"expires_on": "9999-12-31"}, "expires_on"),
    ({"expires_on": "2027-01-01\x00"}, "expires_on"),
])
def test_bad_limits_are_refused_next_to_their_field(client, alice, data, field):
    named = {"support": memory_create(account_id=alice.account.pk, name="support").pk,
             "wiki": memory_create(account_id=alice.account.pk, name="wiki").pk}
    sent = {"name": "x", "tool": "x"}
    for name, value in data.items():
        sent[name] = ([named.get(v, v) for v in value] if isinstance(value, list)
                      else named.get(value, value))
    client.force_login(alice.user)
    before = ApiKey.objects.count()
    reply = client.post("/keys/new/", sent)
    assert reply.status_code == 200
    assert field in reply.context["form"].errors, reply.context["form"].errors
    assert 'class="invalid-feedback' in reply.content.decode()
    assert ApiKey.objects.count() == before


def test_another_accounts_memory_cannot_be_among_a_keys_memories(client, alice, charlie):
    client.force_login(alice.user)
    theirs = charlie.account.memories.get(name="default")
    reply = client.post("/keys/new/", {"name": "x", "tool": "x", "memories": [theirs.pk]})
    assert "memories" in reply.context["form"].errors


def test_the_list_shows_last_use_network_and_warns_of_an_expiry_within_a_week(client, alice):
    key, plaintext = api_key_create(account=alice.account, holder=alice.user, name="ci",
                                    tool="ci", expires_at=timezone.now() + timedelta(days=5))
    client.get("/api/v1/memories", headers={"Authorization": f"Bearer {plaintext}"},
               REMOTE_ADDR="198.51.100.23")
    client.force_login(alice.user)
    page = client.get("/dashboard/").content.decode()
    assert "from 198.51.100.0/24" in page and "198.51.100.23" not in page
    assert 'class="alert alert-warning"' in page
    assert f"em_{key.prefix}_…</code> (ci) expires" in page
    assert "(within a week)" in page


def test_rotating_shows_the_new_secret_once_and_keeps_the_old_for_the_grace(client, alice):
    client.force_login(alice.user)
    page = client.get(f"/keys/{alice.key.pk}/rotate/")
    assert page.status_code == 200 and "7 days" in page.content.decode()
    rotated = client.post(f"/keys/{alice.key.pk}/rotate/", {"grace": "1d"})
    assert rotated.status_code == 302
    shown = client.get(rotated["Location"]).content.decode()
    new = SECRET.search(shown)[1]
    assert new != alice.plaintext and new.startswith(f"em_{alice.key.prefix}_")
    assert "its old one keeps working until" in shown
    assert principal_from_key(new).key_id == principal_from_key(alice.plaintext).key_id
    assert "rotated; the old secret works until" in client.get("/dashboard/").content.decode()
    assert AuditEvent.objects.filter(action="key.rotated", object_id=str(alice.key.pk)).exists()
    # Shown once: the page again does not show it.
    assert new not in client.get(rotated["Location"]).content.decode()


def test_a_bad_grace_is_refused_next_to_its_field(client, alice):
    client.force_login(alice.user)
    for grace in ("forever", "", "1d\x00", "x" * 10_000):
        reply = client.post(f"/keys/{alice.key.pk}/rotate/", {"grace": grace})
        assert reply.status_code == 200 and "grace" in reply.context["form"].errors
    principal_from_key(alice.plaintext)  # untouched


def test_only_the_holder_rotates_a_key_and_another_tenants_key_is_404(client, alice, bob,
                                                                      charlie):
    client.force_login(alice.user)  # the owner, but not the holder of bob's key
    assert client.get(f"/keys/{bob.key.pk}/rotate/").status_code == 404
    assert client.post(f"/keys/{bob.key.pk}/rotate/", {"grace": "none"}).status_code == 404
    assert client.post(f"/keys/{charlie.key.pk}/rotate/", {"grace": "none"}).status_code == 404
    assert client.get(f"/keys/{'9' * 25}/rotate/").status_code == 404
    principal_from_key(bob.plaintext)
    principal_from_key(charlie.plaintext)
    page = client.get("/dashboard/").content.decode()
    assert f"/keys/{alice.key.pk}/rotate/" in page and f"/keys/{bob.key.pk}/rotate/" not in page


def test_rotating_without_grace_refuses_the_old_secret_at_once(client, alice):
    client.force_login(alice.user)
    client.post(f"/keys/{alice.key.pk}/rotate/", {"grace": "none"})
    with pytest.raises(AuthenticationFailed):
        principal_from_key(alice.plaintext)


def test_the_rotate_page_needs_a_sign_in(client, alice):
    reply = client.get(f"/keys/{alice.key.pk}/rotate/")
    assert reply.status_code == 302 and "/login/" in reply["Location"]


def test_moving_a_limited_key_off_a_deleted_memory_adds_the_chosen_one(client, alice):
    support = memory_create(account_id=alice.account.pk, name="support")
    wiki = memory_create(account_id=alice.account.pk, name="wiki")
    key, plaintext = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                    tool="bot", default_memory=support, memories=[support])
    client.force_login(alice.user)
    gone = client.post("/memories/support/delete/", {
        "confirm": "support", "keys_to": "to:wiki", "shown_keys": str(key.pk)})
    assert gone.status_code == 302
    principal = principal_from_key(plaintext)
    assert principal.default_memory_id == wiki.pk and wiki.pk in principal.memory_ids


def test_the_expiry_warning_names_a_key_listed_on_a_later_page(client, alice):
    soon, _ = api_key_create(account=alice.account, holder=alice.user, name="old ci",
                             tool="ci", expires_at=timezone.now() + timedelta(days=2))
    for number in range(25):  # newer keys fill the first page
        api_key_create(account=alice.account, holder=alice.user, name=f"k{number}", tool="k")
    client.force_login(alice.user)
    page = client.get("/dashboard/").content.decode()
    assert f"/keys/{soon.pk}/revoke/" not in page  # listed on page 2
    assert f"em_{soon.prefix}_…</code> (old ci) expires on" in page


def test_the_key_list_names_limited_memories_in_queries_that_do_not_grow(client, alice,
                                                                          settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    support = memory_create(account_id=alice.account.pk, name="support")
    client.force_login(alice.user)

    def queries_with(keys: int) -> int:
        for number in range(keys):
            api_key_create(account=alice.account, holder=alice.user, name=f"k{number}",
                           tool="k", read_only=True, default_memory=support,
                           memories=[support], expires_at=timezone.now() + timedelta(days=3))
        with CaptureQueriesContext(connection) as queries:
            page = client.get("/dashboard/").content.decode()
        assert "only <code>support</code>" in page
        return len(queries)

    # The keys' rate limit as a setting: the plan's is a query a process makes once in 5 s,
    # which the first measure would make and the second not.
    settings.RATE_LIMIT_PER_MINUTE = 240
    assert queries_with(2) == queries_with(10)


RATE = re.compile(r"<span class=\"fw-semibold\">(\d+) of (\d+)</span><div class=\"[^\"]*\">"
                  r"([^<]*)</div>")


@pytest.mark.parametrize("backend", ["redis", "database"])
def test_the_list_shows_each_keys_current_rate_without_counting_a_request(
        client, alice, bob, settings, fake_clock, backend):  # noqa: F811
    settings.RATE_LIMIT_BACKEND = backend
    settings.RATE_LIMIT_PER_MINUTE = 4
    headers = {"Authorization": f"Bearer {alice.plaintext}"}
    for _ in range(3):
        assert client.get("/api/v1/memories", headers=headers).status_code == 200
    client.force_login(alice.user)

    def rates() -> dict[str, tuple[str, str, str]]:
        page = client.get("/dashboard/").content.decode()
        rows = page.split("<tbody>")[2].split("</tr>")[:-1]  # the keys table's rows
        return {row.split("<code>em_")[1][:12]: RATE.search(row).groups() for row in rows}

    seen = rates()
    assert seen == rates()  # reading the windows counted nothing
    assert seen[alice.key.prefix] == ("3", "4", "in the last 60 s")
    assert seen[bob.key.prefix] == ("0", "4", "in the last 60 s")
    fake_clock.advance(10)
    client.get("/api/v1/memories", headers=headers)
    assert rates()[alice.key.prefix] == ("4", "4", "at the limit: refused for 50 s")
    fake_clock.advance(50)  # the first three left the window
    assert rates()[alice.key.prefix] == ("1", "4", "in the last 60 s")
