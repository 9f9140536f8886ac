"""The account's settings page: alice (owner) renames the account, and the rename is in the
audit log; bob (member) and an admin read the name but may not change it; charlie, an
outsider, renames only his own; a bad name is refused by field, and nothing is saved."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.models import Account, Membership
from audit.models import AuditEvent


def test_the_owner_renames_the_account_and_it_is_audited(client, alice):
    client.force_login(alice.user)
    page = client.get("/account/").content.decode()
    assert 'name="name"' in page and "Alice&#x27;s team" in page
    renamed = client.post("/account/", {"name": "  Research lab  "})
    assert renamed.status_code == 302 and renamed["Location"] == "/account/"
    assert Account.objects.get(pk=alice.account.pk).name == "Research lab"
    event = AuditEvent.objects.get(account_id=alice.account.pk, action="account.renamed")
    assert event.after == {"name": "Research lab", "was": "Alice's team"}
    assert event.holder_id == alice.user.pk
    dashboard = client.get("/dashboard/").content.decode()
    assert "Research lab" in dashboard and 'href="/account/"' in dashboard
    # The audit log lists it, and the chain still verifies.
    assert "account.renamed" in client.get("/audit/").content.decode()
    verified = client.post("/audit/verify/", follow=True).content.decode()
    assert "verifies" in verified


def test_the_nav_reaches_the_settings(client, alice):
    client.force_login(alice.user)
    assert 'class="nav-link" href="/account/"' in client.get("/dashboard/").content.decode()


@pytest.mark.parametrize("role", [Membership.Role.MEMBER, Membership.Role.ADMIN])
def test_members_and_admins_read_the_name_but_cannot_rename(client, alice, bob, role):
    Membership.objects.filter(user=bob.user).update(role=role)
    client.force_login(bob.user)
    page = client.get("/account/")
    assert page.status_code == 200 and 'name="name"' not in page.content.decode()
    assert "Owners rename the account" in page.content.decode()
    assert client.post("/account/", {"name": "Taken over"}).status_code == 403
    assert Account.objects.get(pk=alice.account.pk).name == "Alice's team"
    assert not AuditEvent.objects.filter(action="account.renamed").exists()


def test_an_outsider_renames_only_their_own_account(client, alice, charlie):
    client.force_login(charlie.user)
    client.post("/account/", {"name": "Charlie's renamed shop"})
    assert Account.objects.get(pk=alice.account.pk).name == "Alice's team"
    assert Account.objects.get(pk=charlie.account.pk).name == "Charlie's renamed shop"


def test_signed_out_the_settings_ask_for_a_sign_in(client, alice):
    assert client.get("/account/")["Location"].startswith("/login/")
    assert client.post("/account/", {"name": "x"})["Location"].startswith("/login/")


@pytest.mark.parametrize(("name", "says"), [
    ("", "needs a name"), ("   ", "needs a name"), ("x" * 201, "at most 200"),
    ("Bad\x00name", "Null characters are not allowed"), ("Bad\x07name", "control characters"),
])
def test_a_bad_name_is_refused_by_field_and_nothing_is_saved(client, alice, name, says):
    client.force_login(alice.user)
    refused = client.post("/account/", {"name": name})
    assert refused.status_code == 200
    assert says in " ".join(refused.context["form"].errors["name"])
    assert Account.objects.get(pk=alice.account.pk).name == "Alice's team"
    assert not AuditEvent.objects.filter(action="account.renamed").exists()


def test_the_same_name_again_changes_nothing(client, alice):
    client.force_login(alice.user)
    client.post("/account/", {"name": "Alice's team"})
    assert not AuditEvent.objects.filter(action="account.renamed").exists()
    assert get_user_model().objects.count() >= 1
