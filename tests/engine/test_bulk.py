"""echomem.bulk.meanwhile: a statement runs on the server while the caller computes."""

import time

import pytest
from django.db import IntegrityError, connection, transaction

from echomem import bulk
from memories.models import Memory

pytestmark = pytest.mark.django_db


def test_the_block_runs_while_the_server_executes_the_statement():
    with transaction.atomic():
        started = time.perf_counter()
        with bulk.meanwhile("SELECT pg_sleep(1)", []):
            time.sleep(1)
        elapsed = time.perf_counter() - started
    # One after the other would take 2 s.
    assert 1 <= elapsed < 1.8


def test_the_statement_is_done_and_usable_after_the_block(alice):
    with transaction.atomic():
        with bulk.meanwhile("UPDATE memories_memory SET name = %s WHERE account_id = %s",
                            ["renamed", alice.account.pk]):
            pass
        assert bulk.execute("SELECT name FROM memories_memory WHERE account_id = %s",
                            [alice.account.pk]) == [("renamed",)]


def test_the_statements_error_is_djangos_and_raised_when_the_block_ends(alice):
    memory = Memory.objects.get(account_id=alice.account.pk)
    ran = []
    inserting_a_copy = ("INSERT INTO memories_memory SELECT * FROM memories_memory "
                        "WHERE id = %s")
    with (pytest.raises(IntegrityError), transaction.atomic(),
          bulk.meanwhile(inserting_a_copy, [memory.pk])):
        ran.append(True)
    assert ran == [True]
    # The transaction rolled back and the connection is usable.
    assert Memory.objects.filter(account_id=alice.account.pk).count() == 1
    assert connection.is_usable()


def test_an_error_in_the_block_is_the_one_raised(alice):
    renaming = "UPDATE memories_memory SET name = %s WHERE account_id = %s"
    with (pytest.raises(ZeroDivisionError), transaction.atomic(),
          bulk.meanwhile(renaming, ["renamed", alice.account.pk])):
        1 / 0  # noqa: B018
    assert Memory.objects.get(account_id=alice.account.pk).name != "renamed"
