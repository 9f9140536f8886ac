"""API keys in the browser: created with the secret shown once, revoked by whom may."""

from __future__ import annotations

import re

import pytest

from accounts.models import ApiKey
from accounts.principal import principal_from_key
from echomem.errors import AuthenticationFailed
from memories.graph.services import memory_create

SECRET = re.compile(r'value="(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})"')


def test_a_new_key_is_shown_once_and_works(client, alice):
    support = memory_create(account_id=alice.account.pk, name="support")
    client.force_login(alice.user)
    form = client.get("/keys/new/")
    assert b"support" in form.content
    created = client.get(client.post("/keys/new/", {"name": "laptop 2", "tool": "cursor",
                                                    "default_memory": support.pk})["Location"])
    assert created.status_code == 200
    assert "no-store" in created["Cache-Control"]
    plaintext = SECRET.search(created.content.decode())[1]
    principal = principal_from_key(plaintext)
    assert (principal.account_id, principal.tool, principal.default_memory_id) == (
        alice.account.pk, "cursor", support.pk)
    # Never again: the dashboard lists it by prefix only.
    dashboard = client.get("/dashboard/").content.decode()
    assert plaintext[:16] + "…" in dashboard and plaintext not in dashboard


@pytest.mark.parametrize(("data", "field"), [
    ({"name": "", "tool": "cursor"}, "name"),
    ({"name": "x", "tool": "Claude Code!"}, "tool"),
])
def test_a_bad_key_request_names_the_field_and_creates_nothing(client, alice, data, field):
    client.force_login(alice.user)
    before = ApiKey.objects.count()
    reply = client.post("/keys/new/", data)
    assert field in reply.context["form"].errors
    assert ApiKey.objects.count() == before


def test_another_accounts_memory_cannot_be_a_keys_default(client, alice, charlie):
    client.force_login(alice.user)
    theirs = charlie.account.memories.get(name="default")
    reply = client.post("/keys/new/", {"name": "x", "tool": "cursor",
                                       "default_memory": theirs.pk})
    assert "default_memory" in reply.context["form"].errors


def test_a_member_cannot_revoke_the_owners_key_but_the_owner_can_revoke_theirs(client,
                                                                               alice, bob):
    client.force_login(bob.user)
    assert client.get(f"/keys/{alice.key.pk}/revoke/").status_code == 403
    assert client.post(f"/keys/{alice.key.pk}/revoke/").status_code == 403
    principal_from_key(alice.plaintext)  # still works
    revoked = client.post(f"/keys/{bob.key.pk}/revoke/", follow=True).content.decode()
    assert "is revoked" in revoked and f"/keys/{bob.key.pk}/revoke/" not in revoked
    client.force_login(alice.user)
    page = client.get("/dashboard/").content.decode()
    assert f"em_{bob.key.prefix}_" not in page  # revoked keys leave the list
    with pytest.raises(AuthenticationFailed):
        principal_from_key(bob.plaintext)


def test_another_accounts_key_is_not_found(client, alice, charlie):
    client.force_login(alice.user)
    assert client.get(f"/keys/{charlie.key.pk}/revoke/").status_code == 404
    assert client.post(f"/keys/{charlie.key.pk}/revoke/").status_code == 404
    principal_from_key(charlie.plaintext)
