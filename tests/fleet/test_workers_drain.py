"""Celery workers drain without beat: a fact or note that a batch skipped because another
transaction held it, and that still waits once that transaction has ended, is embedded by
the workers all the same, soon, with no write to send it and no beat to sweep it.

A real `echo-memory worker` process on the test database, consuming a queue of this test
only; this process writes as a web process would (ECHO_MEMORY_INDEXING=celery: its writes
send their tasks to that queue), and holds the claim that rolls back
(tests/indexer_locks.py) on its own connection.
"""

from __future__ import annotations

import os
import secrets
import time

import pytest
import redis
from django.db import connection, transaction

import memories.tasks  # registers the tasks a write sends (memories/apps.py)
from echomem.celery import app
from memories.models import Fact, Note
from tests import indexer_locks
from tests.cli.conftest import cli_env
from tests.factories import Engine, fact, note, person
from tests.fleet.conftest import Worker, _admin_url

# Well under beat's sweep (a minute): found here, it was not left to a sweep.
DRAINED_WITHIN = 20.0
PEOPLE = [person("Alice"), person("Bob")]


def rolled_back(cursor, rows) -> None:
    """The holder's batch fails: its transaction rolls back, nothing stored."""
    transaction.set_rollback(True)


@pytest.fixture
def worker_on_this_database(servers, settings, tmp_path):
    """Starts (when called) an `echo-memory worker` on the test database and a Redis queue
    of this test's own, to which this process's writes now send their tasks."""
    queue = f"drain-{secrets.token_hex(4)}"
    default_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    settings.ECHO_MEMORY_INDEXING = "celery"
    database = _admin_url().replace("/postgres?", f"/{connection.settings_dict['NAME']}?", 1)
    env = cli_env(tmp_path / "home", DATABASE_URL=database, REDIS_URL=os.environ["REDIS_URL"],
                  SECRET_KEY="drain-test-" + "k" * 64, ECHO_MEMORY_LOG_FORMAT="json",
                  ECHO_MEMORY_INDEXING="celery", ECHO_MEMORY_CELERY_QUEUE=queue,
                  ECHO_MEMORY_SELF_HOSTED="0")

    def start() -> Worker:
        worker = Worker(servers(["worker", "--concurrency", "1"], env, tmp_path / "worker.log"))
        worker.wait_ready()
        return worker

    try:
        yield start
    finally:
        app.conf.task_default_queue = default_queue
        broker = redis.Redis.from_url(os.environ["REDIS_URL"])
        broker.delete(queue, *broker.keys(f"_kombu.binding*.{queue}"))


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def messages(worker: Worker, task: str) -> list[str]:
    return [line["message"] for line in worker.lines() if line.get("task") == task]


@pytest.mark.django_db(transaction=True)
def test_a_fact_skipped_for_a_claim_that_rolled_back_is_embedded_without_beat(
        alice, worker_on_this_database):
    engine = Engine(alice.principal)
    written = engine.write(session_id="lent", entities=PEOPLE, assume_new=True, facts=[
        fact("Alice", "Bob", "lent", "Alice lent Bob her bicycle"),
        fact("Alice", "Bob", "taught", "Alice taught Bob to sail")])
    held, other = (edge["fact_id"] for edge in written["edges_created"])
    # The write's task waits in the queue; another indexer claims one of its facts first,
    # and its batch will fail.
    with indexer_locks.an_indexer_holding(
            "SELECT id FROM memories_fact WHERE id = %s FOR UPDATE", held, rolled_back,
            seconds=60):
        worker = worker_on_this_database()
        # The worker's batch skips the held fact and embeds the other.
        assert wait_until(lambda: "embedded 1 of 2 fact(s)" in messages(
            worker, "memories.tasks.embed_facts"), 60), worker.server.output()
        assert Fact.objects.get(pk=other).embedding is not None
        assert Fact.objects.get(pk=held).embedding is None

    # Rolled back: nothing else will send the fact to a worker, and no beat runs.
    assert wait_until(lambda: Fact.objects.get(pk=held).embedding is not None,
                      DRAINED_WITHIN), worker.server.output()


@pytest.mark.django_db(transaction=True)
def test_a_note_the_sweep_skipped_for_a_claim_that_rolled_back_is_embedded_without_beat(
        alice, worker_on_this_database):
    from tools.calling import run_validated
    from tools.registry import TOOLS

    # A saved note sends the sweep (it names no facts).
    saved = run_validated(alice.principal, TOOLS["memory_save"], note())
    note_id = saved["id"]
    with indexer_locks.an_indexer_holding(
            "SELECT id FROM memories_note WHERE id = %s FOR UPDATE", note_id, rolled_back,
            seconds=60):
        worker = worker_on_this_database()
        # The sweep ran and found nothing it could claim.
        assert wait_until(lambda: any(
            "succeeded" in line for line in worker.server.output().splitlines()
            if "memories.tasks.index_waiting" in line), 60), worker.server.output()
        assert Note.objects.get(pk=note_id).embedding is None

    assert wait_until(lambda: Note.objects.get(pk=note_id).embedding is not None,
                      DRAINED_WITHIN), worker.server.output()


@pytest.mark.django_db(transaction=True)
def test_a_sweep_looks_again_for_what_waited_before_it_and_not_for_what_came_after(
        alice, settings, worker_on_this_database):
    from django.utils import timezone

    settings.ECHO_MEMORY_INDEXING = "manual"  # the write sends nothing; no worker runs
    queue = redis.Redis.from_url(os.environ["REDIS_URL"])
    before = timezone.now().isoformat()
    written = Engine(alice.principal).write(
        session_id="lent", entities=PEOPLE, assume_new=True,
        facts=[fact("Alice", "Bob", "lent", "Alice lent Bob her bicycle")])
    held = written["edges_created"][0]["fact_id"]
    after = timezone.now().isoformat()

    with indexer_locks.an_indexer_holding(
            "SELECT id FROM memories_fact WHERE id = %s FOR UPDATE", held, rolled_back,
            seconds=60):
        # A sweep first sent before the write: the held fact is a later write's, which has
        # a task of its own, so the chain ends (chains do not pile up while writes come).
        assert memories.tasks.index_waiting.apply(args=[before]).get() == 0
        assert queue.llen(app.conf.task_default_queue) == 0
        # A sweep first sent after it: the fact waited already, so it looks again later.
        assert memories.tasks.index_waiting.apply(args=[after]).get() == 0
        assert queue.llen(app.conf.task_default_queue) == 1
