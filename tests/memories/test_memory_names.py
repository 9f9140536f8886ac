from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.services import api_key_create
from echomem.errors import NotFound, ValidationFailed
from memories.graph.selectors import memory_for, memory_list
from memories.graph.services import memory_create
from memories.models import Memory


@pytest.mark.parametrize("name", ["a", "support-bot", "matchbrain_dev", "x" * 64, "2026-q4"])
def test_valid_memory_names_are_accepted(alice, name):
    memory = memory_create(account_id=alice.account.pk, name=name)
    assert Memory.objects.get(pk=memory.pk).name == name


@pytest.mark.parametrize("name", ["", "Support", "support bot", "x" * 65, "café", "a/b", "a.b"])
def test_invalid_memory_names_are_refused_naming_field_and_fix(alice, name):
    with pytest.raises(ValidationFailed) as caught:
        memory_create(account_id=alice.account.pk, name=name)
    assert caught.value.field == "name"
    assert "lowercase letters, digits" in caught.value.fix
    assert not Memory.objects.filter(account=alice.account, name=name).exists()


def test_the_database_refuses_a_bad_name_that_skips_the_service(alice):
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.create(account=alice.account, name="Has Spaces")


def test_names_are_unique_per_account_but_not_across_accounts(alice, charlie):
    memory_create(account_id=alice.account.pk, name="shared-name")
    memory_create(account_id=charlie.account.pk, name="shared-name")
    with pytest.raises(ValidationFailed, match="already exists"):
        memory_create(account_id=alice.account.pk, name="shared-name")


def test_every_new_account_has_a_default_memory(alice, charlie):
    assert [m.name for m in memory_list(alice.principal)] == ["default"]
    assert [m.name for m in memory_list(charlie.principal)] == ["default"]


def test_memory_is_chosen_by_name_then_key_default_then_account_default(alice):
    support = memory_create(account_id=alice.account.pk, name="support")
    assert memory_for(alice.principal).name == "default"
    assert memory_for(alice.principal, "support") == support
    _, plaintext = api_key_create(account=alice.account, holder=alice.user, name="bot",
                                  tool="support-bot", default_memory=support)
    from accounts.principal import principal_from_key

    assert memory_for(principal_from_key(plaintext)) == support


def test_unknown_memory_is_refused_with_the_existing_names(alice):
    memory_create(account_id=alice.account.pk, name="support")
    with pytest.raises(NotFound) as caught:
        memory_for(alice.principal, "suport")
    assert caught.value.field == "memory"
    assert "'suport'" in caught.value.message
    assert "default, support" in caught.value.message


def test_another_accounts_memory_is_indistinguishable_from_a_missing_one(alice, charlie):
    memory_create(account_id=charlie.account.pk, name="charlies-secrets")
    with pytest.raises(NotFound) as caught:
        memory_for(alice.principal, "charlies-secrets")
    assert "charlies-secrets" not in caught.value.message.split(":", 1)[1]
    assert memory_list(alice.principal) == [alice.account.memories.get(name="default")]


def test_memory_list_is_one_query(alice, django_assert_num_queries):
    for index in range(5):
        memory_create(account_id=alice.account.pk, name=f"m{index}")
    principal = alice.principal
    with django_assert_num_queries(1):
        names = [m.name for m in memory_list(principal)]
    assert names == ["default", "m0", "m1", "m2", "m3", "m4"]
    assert connection.vendor == "postgresql"
