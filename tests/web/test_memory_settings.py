"""A memory renamed, made the account's default, or protected from deletion as the
default; a whole account deleted by its owner. Each recorded, each refused to members."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.models import Account, ApiKey, Membership
from audit.models import AuditEvent
from audit.verify import audit_verify
from echomem.errors import NotFound
from memories.models import Fact, Memory
from tests.factories import Engine, fact, person


def _ada_mentors_grace(principal, memory: str | None = None) -> None:
    named = {"memory": memory} if memory else {}
    Engine(principal).write(assume_new=True, entities=[person("Ada"), person("Grace")],
                            facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")],
                            **named)


def test_renaming_keeps_the_facts_refuses_the_old_name_and_is_recorded(client, alice):
    Memory.objects.create(account=alice.account, name="notes")
    _ada_mentors_grace(alice.principal, "notes")
    client.force_login(alice.user)
    assert client.post("/memories/notes/rename/", {"new_name": "team-notes"}).status_code == 302
    assert Fact.objects.filter(memory__name="team-notes").count() == 1
    with pytest.raises(NotFound, match=r"unknown memory 'notes'.*team-notes"):
        Engine(alice.principal).query("Ada", memory="notes")
    event = AuditEvent.objects.get(account=alice.account, action="memory.renamed")
    assert (event.before, event.after) == ({"name": "notes"}, {"name": "team-notes"})
    assert audit_verify(alice.account.pk) == (True, None)


def test_a_rename_to_a_taken_or_bad_name_is_refused_next_to_the_field(client, alice):
    Memory.objects.create(account=alice.account, name="notes")
    client.force_login(alice.user)
    taken = client.post("/memories/notes/rename/", {"new_name": "default"})
    assert "already exists" in taken.context["form"].errors["new_name"][0]
    bad = client.post("/memories/notes/rename/", {"new_name": "Team Notes"})
    assert "lowercase letters" in bad.context["form"].errors["new_name"][0]
    assert set(Memory.objects.filter(account=alice.account).values_list("name", flat=True)) \
        == {"default", "notes"}


def test_calls_naming_no_memory_go_to_the_account_default_once_it_changes(client, alice):
    Memory.objects.create(account=alice.account, name="notes")
    client.force_login(alice.user)
    made = client.post("/memories/notes/make-default/", follow=True).content.decode()
    assert "from 1 key(s) without a default memory of their own" in made  # alice's
    event = AuditEvent.objects.get(action="account.default_memory_changed")
    assert event.after == {"default_memory": "notes", "keys_following": 1}
    alice.account.refresh_from_db()
    assert alice.account.default_memory.name == "notes"
    _ada_mentors_grace(alice.principal)  # alice's key names no default memory
    assert Fact.objects.get().memory.name == "notes"
    page = client.get("/dashboard/").content.decode()
    assert "Make notes the default memory" not in page
    assert "Make default the default memory" in page
    assert AuditEvent.objects.filter(action="account.default_memory_changed").exists()


def test_the_default_memory_cannot_be_deleted_until_another_is_default(client, alice):
    client.force_login(alice.user)
    refused = client.post("/memories/default/delete/", {"confirm": "default"})
    assert "make another memory the default first" in \
        refused.context["form"].errors["confirm"][0]
    assert Memory.objects.filter(account=alice.account, name="default").exists()
    assert 'aria-label="Delete memory default"' not in client.get("/dashboard/").content.decode()


@pytest.mark.parametrize("page", ["/memories/notes/rename/", "/memories/notes/make-default/",
                                  "/account/delete/"])
def test_members_may_not_rename_change_the_default_or_delete_the_account(client, alice, bob,
                                                                          page):
    Memory.objects.create(account=alice.account, name="notes")
    client.force_login(bob.user)
    assert client.post(page, {"new_name": "x", "confirm": "Alice's team"}).status_code == 403
    assert set(Memory.objects.filter(account=alice.account).values_list("name", flat=True)) \
        == {"default", "notes"}
    assert Account.objects.filter(pk=alice.account.pk).exists()


def test_only_an_owner_deletes_an_account_and_everything_of_it_goes(client, alice, bob,
                                                                    charlie):
    Membership.objects.filter(user=bob.user).update(role=Membership.Role.ADMIN)
    _ada_mentors_grace(alice.principal)
    _ada_mentors_grace(charlie.principal)
    client.force_login(bob.user)
    assert client.post("/account/delete/", {"confirm": "Alice's team"}).status_code == 403
    client.force_login(alice.user)
    wrong = client.post("/account/delete/", {"confirm": "alice's team"})
    assert "type the account's name" in wrong.context["form"].errors["confirm"][0]
    done = client.post("/account/delete/", {"confirm": "Alice's team"}, follow=True)
    assert "is deleted, with its 1 memories and 1 facts" in done.content.decode()
    assert not Account.objects.filter(pk=alice.account.pk).exists()
    for model in (Memory, ApiKey, Membership, AuditEvent):
        assert not model.objects.filter(account_id=alice.account.pk).exists(), model
    assert not Fact.objects.filter(memory__account_id=alice.account.pk).exists()
    assert get_user_model().objects.filter(username__in=["alice", "bob"]).count() == 2
    # Charlie's account, its facts and its chain are untouched.
    assert Fact.objects.filter(memory__account=charlie.account).count() == 1
    assert audit_verify(charlie.account.pk) == (True, None)
    assert client.get("/dashboard/").status_code == 200  # "you are in no account" page


def test_new_is_not_a_memory_name_because_it_is_the_create_page(client, alice):
    client.force_login(alice.user)
    refused = client.post("/memories/new/", {"name": "new"})
    assert "not 'new'" in refused.context["form"].errors["name"][0]
    Memory.objects.create(account=alice.account, name="notes")
    renamed = client.post("/memories/notes/rename/", {"new_name": "new"})
    assert "not 'new'" in renamed.context["form"].errors["new_name"][0]
    assert not Memory.objects.filter(name="new").exists()
