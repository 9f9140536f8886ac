"""Deleting a memory that live keys use as their default: the page lists those keys and the
owner chooses (revoke them, or move them to a memory they pick); nothing deletes the memory
while a key's writes would silently land elsewhere, and each key's fate is audited."""

from __future__ import annotations

import pytest
from django.contrib import admin

from accounts.models import Account, ApiKey
from accounts.principal import principal_from_key
from accounts.services import api_key_create, api_key_revoke
from audit.models import AuditEvent
from echomem.errors import AuthenticationFailed, ValidationFailed
from memories.erasure.services import KeysDecision, memory_delete
from memories.models import Fact, Memory
from tests.factories import Engine, fact, person


@pytest.fixture
def doomed(alice, bob):
    """A memory two live keys (alice's and bob's) and one revoked key write to by default."""
    memory = Memory.objects.create(account=alice.account, name="doomed")
    made = [api_key_create(account=alice.account, holder=holder, name=name, tool="ci",
                           default_memory=memory)
            for holder, name in ((alice.user, "ci-alice"), (bob.user, "ci-bob"),
                                 (alice.user, "old"))]
    api_key_revoke(key=made[2][0], actor_id=alice.user.pk)
    return memory, made[:2]


def _write_by_default(plaintext: str) -> None:
    """An agent's write that names no memory: it goes to its key's default."""
    Engine(principal_from_key(plaintext)).write(
        assume_new=True, entities=[person("Ada"), person("Grace")],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])


def test_the_delete_page_lists_the_keys_and_refuses_until_the_owner_chooses(client, alice,
                                                                            doomed):
    memory, made = doomed
    client.force_login(alice.user)
    page = client.get("/memories/doomed/delete/").content.decode()
    for key, _ in made:
        assert f"em_{key.prefix}_" in page
    assert page.count("<td><code>em_") == 2  # not the revoked key
    assert 'value="revoke"' in page and 'value="to:default"' in page
    refused = client.post("/memories/doomed/delete/", {"confirm": "doomed"})
    assert refused.status_code == 200
    assert "Choose what happens to these 2 keys" in refused.context["form"].errors["keys_to"][0]
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert {k.default_memory_id for k in ApiKey.objects.filter(name__startswith="ci-")} == {
        memory.pk}


def test_revoking_the_keys_deletes_the_memory_and_audits_each_key(client, alice, doomed):
    memory, made = doomed
    client.force_login(alice.user)
    shown = ",".join(str(key.pk) for key, _ in made)
    done = client.post("/memories/doomed/delete/", {
        "confirm": "doomed", "keys_to": "revoke", "shown_keys": shown}, follow=True)
    assert "2 key(s) that used it by default are revoked" in done.content.decode()
    assert not Memory.objects.filter(pk=memory.pk).exists()
    for key, plaintext in made:
        with pytest.raises(AuthenticationFailed):
            principal_from_key(plaintext)
        assert AuditEvent.objects.filter(action="key.revoked", object_id=str(key.pk),
                                         holder_id=alice.user.pk).exists()
    deleted = AuditEvent.objects.get(action="memory.deleted", object_id=str(memory.pk))
    assert deleted.before["keys_revoked"] == [key.pk for key, _ in made]


def test_moving_the_keys_sends_their_writes_to_the_memory_the_owner_picked(client, alice,
                                                                          doomed):
    memory, made = doomed
    support = Memory.objects.create(account=alice.account, name="support")
    client.force_login(alice.user)
    shown = ",".join(str(key.pk) for key, _ in made)
    done = client.post("/memories/doomed/delete/", {
        "confirm": "doomed", "keys_to": "to:support", "shown_keys": shown}, follow=True)
    assert "now use support" in done.content.decode()
    assert not Memory.objects.filter(pk=memory.pk).exists()
    for key, plaintext in made:
        event = AuditEvent.objects.get(action="key.default_memory_changed",
                                       object_id=str(key.pk))
        assert (event.after["from"], event.after["to"]) == ("doomed", "support")
        assert "doomed" in event.after["why"] and event.holder_id == alice.user.pk
        _write_by_default(plaintext)
    default = Account.objects.get(pk=alice.account.pk).default_memory_id
    assert Fact.objects.filter(memory=support).count() == 1  # one live edge, superseded once
    assert not Fact.objects.filter(memory_id=default).exists()


def test_the_service_refuses_a_delete_that_would_move_a_key_silently(alice, doomed):
    memory, made = doomed
    with pytest.raises(ValidationFailed) as refused:
        memory_delete(alice.principal, "doomed", confirm="doomed")
    assert refused.value.field == "keys" and f"em_{made[0][0].prefix}_" in refused.value.message
    # A decision that covers only the keys shown earlier leaves out one added since.
    with pytest.raises(ValidationFailed) as refused:
        memory_delete(alice.principal, "doomed", confirm="doomed",
                      keys=KeysDecision(key_ids=frozenset({made[0][0].pk})))
    assert f"em_{made[1][0].prefix}_" in refused.value.message
    assert f"em_{made[0][0].prefix}_" not in refused.value.message
    with pytest.raises(ValidationFailed) as refused:
        memory_delete(alice.principal, "doomed", confirm="doomed", keys=KeysDecision(
            key_ids=frozenset(k.pk for k, _ in made), move_to="doomed"))
    assert refused.value.field == "move_to"
    with pytest.raises(ValidationFailed) as refused:
        memory_delete(alice.principal, "doomed", confirm="doomed", keys=KeysDecision(
            key_ids=frozenset(k.pk for k, _ in made), move_to="gone-already"))
    assert refused.value.field == "move_to"
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert set(ApiKey.objects.filter(pk__in=[k.pk for k, _ in made], revoked_at__isnull=True)
               .values_list("default_memory_id", flat=True)) == {memory.pk}


def test_a_key_added_after_the_page_was_loaded_is_listed_and_asked_about(client, alice,
                                                                         doomed):
    memory, made = doomed
    client.force_login(alice.user)
    shown = ",".join(str(key.pk) for key, _ in made)
    late, _ = api_key_create(account=alice.account, holder=alice.user, name="late",
                             tool="ci", default_memory=memory)
    again = client.post("/memories/doomed/delete/", {
        "confirm": "doomed", "keys_to": "revoke", "shown_keys": shown})
    assert again.status_code == 200 and f"em_{late.prefix}_" in again.content.decode()
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert not ApiKey.objects.filter(pk__in=[k.pk for k, _ in made],
                                     revoked_at__isnull=False).exists()
    # The page now shows all three; choosing for them deletes.
    listed = again.context["form"]["shown_keys"].value()
    assert set(listed.split(",")) == {str(k.pk) for k, _ in made} | {str(late.pk)}
    client.post("/memories/doomed/delete/", {"confirm": "doomed", "keys_to": "revoke",
                                             "shown_keys": listed})
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_a_memory_no_key_uses_is_deleted_without_the_question(client, alice):
    Memory.objects.create(account=alice.account, name="plain")
    client.force_login(alice.user)
    page = client.get("/memories/plain/delete/")
    assert "keys_to" not in page.context["form"].fields
    client.post("/memories/plain/delete/", {"confirm": "plain"})
    assert not Memory.objects.filter(name="plain").exists()


def test_keys_cannot_be_moved_to_another_accounts_memory(client, alice, charlie, doomed):
    memory, made = doomed
    client.force_login(alice.user)
    theirs = Memory.objects.create(account=charlie.account, name="theirs")
    reply = client.post("/memories/doomed/delete/", {
        "confirm": "doomed", "keys_to": f"to:{theirs.name}",
        "shown_keys": ",".join(str(k.pk) for k, _ in made)})
    assert "keys_to" in reply.context["form"].errors
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert not ApiKey.objects.filter(default_memory=theirs).exists()


def _deletes_memories(model) -> bool:
    """Whether deleting a row of `model` deletes memories (itself, or by cascade)."""
    return model is Memory or any(
        field.related_model is model and field.remote_field.on_delete.__name__ == "CASCADE"
        for field in Memory._meta.concrete_fields if field.many_to_one)


def test_no_admin_page_deletes_a_memory_around_the_erasure_path(rf, alice):
    """Every model admin (and inline) whose delete would delete a memory offers no delete."""
    request = rf.get("/admin/")
    request.user = alice.user
    alice.user.is_staff = alice.user.is_superuser = True
    doors = []
    for model, model_admin in admin.site._registry.items():
        if _deletes_memories(model):
            doors.append(model.__name__)
            assert not model_admin.has_delete_permission(request), model.__name__
            assert "delete_selected" not in model_admin.get_actions(request), model.__name__
        for inline in model_admin.get_inline_instances(request):
            if _deletes_memories(inline.model):
                doors.append(f"{model.__name__}.{inline.model.__name__}")
                assert not inline.can_delete, inline
    assert {"Memory", "Account", "Account.Memory"} <= set(doors)


def test_the_admin_refuses_to_delete_a_memory_a_key_uses(admin_client, alice, doomed):
    memory, made = doomed
    assert admin_client.get(f"/admin/memories/memory/{memory.pk}/delete/").status_code == 403
    assert admin_client.post(f"/admin/memories/memory/{memory.pk}/delete/",
                             {"post": "yes"}).status_code == 403
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert ApiKey.objects.get(pk=made[0][0].pk).default_memory_id == memory.pk
