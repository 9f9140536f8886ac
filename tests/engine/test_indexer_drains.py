"""The single box's indexer thread (memories/search/indexing.py `_Background`) drains: no
fact is left waiting while it sleeps, whatever happened around its last pass.

Real threads on real connections: the thread's pass is only watched (each batch's count
recorded), never replaced.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import transaction

from memories.models import Fact
from memories.search import indexing
from tests import indexer_locks
from tests.factories import Engine, fact, person

# Well under the thread's sweep (60 s): a fact found here was not left to the sweep.
DRAINED_WITHIN = 10.0
PEOPLE = [person("Alice"), person("Bob")]


@pytest.fixture
def indexer_thread(settings, monkeypatch):
    """This process's indexer thread, started fresh by the first write that wakes it, with
    every batch's count recorded (`batches`, in order); stopped afterwards."""
    settings.ECHO_MEMORY_INDEXING = "manual"  # until the test says otherwise
    monkeypatch.setattr(indexing, "_background", None)
    batches: list[int] = []
    index_batch = indexing._index_batch

    def watched(size: int, **options) -> int:
        done = index_batch(size, **options)
        batches.append(done)
        return done

    monkeypatch.setattr(indexing, "_index_batch", watched)
    yield batches
    indexing.stop_background(30)


def waiting(*fact_ids) -> int:
    return Fact.objects.filter(pk__in=fact_ids, embedding__isnull=True).count()


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def write_one(engine: Engine, text: str) -> str:
    written = engine.write(session_id=text, entities=PEOPLE, assume_new=True,
                           facts=[fact("Alice", "Bob", text.replace(" ", "_"), text)])
    return written["edges_created"][0]["fact_id"]


@pytest.mark.django_db(transaction=True)
def test_a_fact_whose_claim_was_abandoned_mid_batch_is_indexed_without_a_write(
        alice, settings, indexer_thread):
    engine = Engine(alice.principal)
    fact_id = write_one(engine, "Alice lent Bob her bicycle")
    # Another process's indexer claims the fact, then its batch fails and rolls back.
    with indexer_locks.an_indexer_holding(
            "SELECT id FROM memories_fact WHERE id = %s FOR UPDATE", fact_id,
            lambda cursor, rows: transaction.set_rollback(True), seconds=30):
        # This process's thread looks while the fact is held: it claims nothing and idles.
        indexing.background()
        assert wait_until(lambda: indexer_thread and indexer_thread[-1] == 0, 30)

    # No write follows to wake it; the fact is indexed all the same, and soon.
    assert wait_until(lambda: not waiting(fact_id), DRAINED_WITHIN), indexer_thread
    assert Fact.objects.get(pk=fact_id).embedding is not None


@pytest.mark.django_db(transaction=True)
def test_a_write_landing_as_a_pass_finds_the_queue_empty_is_indexed(
        alice, settings, indexer_thread, monkeypatch):
    engine = Engine(alice.principal)
    settings.ECHO_MEMORY_INDEXING = "thread"
    found_empty, written = threading.Event(), threading.Event()
    index_batch = indexing._index_batch  # the watched one

    def pausing_when_empty(size: int, **options) -> int:
        """Between "nothing left" and the pass ending, the next write commits and wakes."""
        done = index_batch(size, **options)
        if not done and not found_empty.is_set():
            found_empty.set()
            written.wait(30)
        return done

    monkeypatch.setattr(indexing, "_index_batch", pausing_when_empty)
    first = write_one(engine, "Alice sold Bob her guitar")
    assert found_empty.wait(30)
    assert not waiting(first)
    second = write_one(engine, "Alice taught Bob to sail")
    written.set()

    assert wait_until(lambda: not waiting(second), DRAINED_WITHIN), indexer_thread


class Fatal(BaseException):
    """What a pass's `except Exception` does not catch: it ends the thread, as any error
    escaping the thread's loop would."""


@pytest.mark.injects_server_fault  # the death's traceback is logged, as it should be
@pytest.mark.django_db(transaction=True)
def test_an_indexer_thread_that_died_is_started_again_by_the_next_write(
        alice, settings, indexer_thread, monkeypatch, caplog):
    engine = Engine(alice.principal)
    settings.ECHO_MEMORY_INDEXING = "thread"
    index_batch = indexing._index_batch  # the watched one
    died = threading.Event()

    def fatal_once(size: int, **options) -> int:
        if not died.is_set():
            died.set()
            raise Fatal("the thread's loop ends here")
        return index_batch(size, **options)

    monkeypatch.setattr(indexing, "_index_batch", fatal_once)
    first = write_one(engine, "Alice lent Bob her bicycle")  # wakes the thread: it dies
    dead = indexing._background
    assert died.wait(30) and wait_until(lambda: not dead.is_alive(), 30)
    assert waiting(first)

    second = write_one(engine, "Alice taught Bob to sail")
    assert wait_until(lambda: not waiting(first, second), DRAINED_WITHIN), indexer_thread
    assert indexing._background is not dead and indexing._background.is_alive()
    said = [(record.levelname, record.getMessage()) for record in caplog.records
            if record.name == indexing.__name__]
    assert ("CRITICAL", "the indexer thread stopped on an error; the next write starts "
                        "another") in said
    assert ("ERROR", "the indexer thread had died; starting another") in said
