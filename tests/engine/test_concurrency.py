"""Concurrent writers on real connections: the database keeps one live edge per key."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from memories.models import Entity, Fact
from tests.factories import Engine, fact, person
from tools.calling import run_validated
from tools.registry import TOOLS

WRITERS = 20


def run_concurrently(work, count: int) -> list[object]:
    barrier = threading.Barrier(count)
    results: list[object] = [None] * count

    def worker(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work(index)
        except Exception as exc:  # reported below, with the others
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_writers_of_one_key_leave_exactly_one_live_edge(alice):
    principal = alice.principal
    Engine(principal).write(entities=[person("Alice"), person("Bob")], assume_new=True)

    def write(index: int):
        return run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "session_id": f"writer-{index}",
            "entities": [person("Alice"), person("Bob")],
            "facts": [fact("Alice", "Bob", "status", f"version {index}")],
        })

    results = run_concurrently(write, WRITERS)
    assert all(isinstance(r, dict) and r["stored"] for r in results), results
    versions = Fact.objects.filter(relation_type="status")
    assert versions.count() == WRITERS
    live = versions.filter(superseded_at__isnull=True)
    assert live.count() == 1
    # The versions form one unbroken line: each superseded one points at another version.
    superseded = versions.filter(superseded_at__isnull=False)
    assert superseded.count() == WRITERS - 1
    assert set(superseded.values_list("superseded_by", flat=True)) <= set(
        versions.values_list("id", flat=True))


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_writes_of_a_new_entity_create_one_node(alice):
    principal = alice.principal

    def write(index: int):
        return run_validated(principal, TOOLS["write_episode"], {
            "scope": "shared", "assume_new": True,
            "entities": [person("Grace"), person("Heidi")],
            "facts": [fact("Grace", "Heidi", "knows", "Grace knows Heidi")],
        })

    results = run_concurrently(write, 8)
    assert all(isinstance(r, dict) and r["stored"] for r in results), results
    assert Entity.objects.filter(name="Grace").count() == 1
    assert Fact.objects.filter(superseded_at__isnull=True).count() == 1
    assert sum(r["units"] for r in results) == 1  # retries of the same fact cost nothing
