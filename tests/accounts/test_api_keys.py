from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from accounts import key_cache, keys
from accounts.models import ApiKey
from accounts.principal import principal_from_authorization, principal_from_key
from accounts.services import api_key_create, api_key_revoke
from echomem.errors import AuthenticationFailed, ValidationFailed


def test_issued_key_resolves_to_its_account_holder_and_tool(alice):
    principal = principal_from_authorization(f"Bearer {alice.plaintext}")
    assert principal.account_id == alice.account.pk
    assert principal.holder_id == alice.user.pk
    assert principal.tool == "claude-code"
    assert principal.key_id == alice.key.pk


def test_stored_row_holds_no_usable_secret(alice):
    prefix, secret = keys.parse(alice.plaintext)
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM accounts_apikey WHERE id = %s", [alice.key.pk])
        row = cursor.fetchone()
    stored = " ".join(str(value) for value in row)
    assert secret not in stored
    assert alice.plaintext not in stored
    # What is stored cannot be presented as the key either.
    forged = f"em_{prefix}_{alice.key.secret_hash[:43]}"
    with pytest.raises(AuthenticationFailed):
        principal_from_key(forged)


def test_revoked_key_is_refused(alice):
    api_key_revoke(key=alice.key)
    with pytest.raises(AuthenticationFailed, match="revoked") as caught:
        principal_from_authorization(f"Bearer {alice.plaintext}")
    assert caught.value.field == "Authorization"


@pytest.mark.parametrize("header", [
    None,
    "",
    "Bearer",
    "Bearer   ",
    "Basic dXNlcjpwYXNz",
    "Token em_0123456789ab_" + "a" * 43,
    "Bearer em_0123456789ab",
    "Bearer em_XYZ_" + "a" * 43,
    "Bearer em_0123456789ab_" + "a" * 42,
    "Bearer sk_live_0123456789",
])
def test_malformed_or_missing_header_is_refused_with_the_fix(db, header):
    with pytest.raises(AuthenticationFailed) as caught:
        principal_from_authorization(header)
    assert caught.value.field == "Authorization"
    assert caught.value.fix


def test_unknown_prefix_is_refused(alice):
    _, secret = keys.parse(alice.plaintext)
    with pytest.raises(AuthenticationFailed, match="not valid"):
        principal_from_key(f"em_{'0' * 12}_{secret}")


def test_prefix_of_one_key_with_secret_of_another_account_is_refused(alice, charlie):
    alice_prefix, _ = keys.parse(alice.plaintext)
    _, charlie_secret = keys.parse(charlie.plaintext)
    with pytest.raises(AuthenticationFailed, match="not valid"):
        principal_from_key(f"em_{alice_prefix}_{charlie_secret}")


def test_a_key_only_ever_speaks_for_its_own_account(alice, charlie):
    assert principal_from_key(charlie.plaintext).account_id == charlie.account.pk
    assert principal_from_key(alice.plaintext).account_id != charlie.account.pk


def test_principal_is_resolved_in_one_indexed_query_then_kept_a_moment(
        alice, django_assert_num_queries):
    principal_from_key(alice.plaintext)  # first use also records last_used_at
    key_cache.forget()
    with django_assert_num_queries(1):
        principal_from_key(alice.plaintext)
    # The next requests within key_cache.TTL_SECONDS are answered from this process's memory.
    with django_assert_num_queries(0):
        assert principal_from_key(alice.plaintext).key_id == alice.key.pk
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")  # a tiny table would be scanned anyway
        cursor.execute("EXPLAIN SELECT * FROM accounts_apikey WHERE prefix = %s",
                       [alice.key.prefix])
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert "Index Scan" in plan and "prefix" in plan


def test_last_used_at_is_recorded_at_most_once_a_minute(alice):
    assert ApiKey.objects.get(pk=alice.key.pk).last_used_at is None
    principal_from_key(alice.plaintext)
    first = ApiKey.objects.get(pk=alice.key.pk).last_used_at
    assert first is not None and timezone.now() - first < timezone.timedelta(seconds=5)
    principal_from_key(alice.plaintext)
    assert ApiKey.objects.get(pk=alice.key.pk).last_used_at == first


def test_key_holder_must_be_a_member_of_the_account(alice, charlie):
    with pytest.raises(ValidationFailed) as caught:
        api_key_create(account=alice.account, holder=charlie.user, name="x", tool="cursor")
    assert caught.value.field == "holder"
    assert not ApiKey.objects.filter(holder=charlie.user, account=alice.account).exists()


def test_key_default_memory_must_belong_to_the_account(alice, charlie):
    other = charlie.account.memories.get(name="default")
    with pytest.raises(ValidationFailed) as caught:
        api_key_create(account=alice.account, holder=alice.user, name="x", tool="cursor",
                       default_memory=other)
    assert caught.value.field == "default_memory"


def test_key_needs_a_tool_label(alice):
    with pytest.raises(ValidationFailed) as caught:
        api_key_create(account=alice.account, holder=alice.user, name="x", tool="  ")
    assert caught.value.field == "tool"


def test_plaintext_keys_are_unique_and_well_formed(alice):
    issued = {keys.issue().plaintext for _ in range(200)}
    assert len(issued) == 200
    assert all(keys.parse(key) for key in issued)
