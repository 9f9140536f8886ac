"""What Celery beat runs: the schedule names each periodic task, `echo-memory beat` runs
with it, and each task does its job when called (here in process, on the test database)."""

from __future__ import annotations

import json
import shelve
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from django.utils import timezone

from billing.models import StripeEvent
from echomem.celery import BEAT_SCHEDULE, app
from mcp_gateway.models import McpSession, RateLimitHit
from memories.models import EmbeddingModelState, Entity, Fact
from memories.search import reembedding
from tests.factories import write_waiting_facts

# Every periodic task and the test below that shows it working.
COVERED = {
    "memories.tasks.index_waiting": "test_the_sweep_embeds_what_waits",
    "memories.tasks.reembed_after_model_change":
        "test_after_a_model_change_every_vector_is_made_again_once",
    "mcp_gateway.tasks.expire_sessions": "test_idle_sessions_expire",
    "mcp_gateway.tasks.expire_rate_limits":
        "test_passed_rate_windows_are_deleted_each_by_its_own_window",
    "billing.tasks.retry_failed_events": "test_failed_billing_events_are_handled_again",
    "accounts.tasks.mail_expiring_keys": "tests/accounts/test_scoped_keys.py::"
                                         "test_beat_and_the_single_boxs_housekeeping_both_send"
                                         "_the_expiry_mail",
    "accounts.tasks.delete_stale_oauth_registrations":
        "tests/oauth/test_stale_registrations.py::"
        "test_beat_and_the_single_boxs_housekeeping_both_delete_stale_registrations",
}


@pytest.fixture
def eager():
    """Tasks a task sends (the rest of a sweep, the next re-embedding step) run at once."""
    app.loader.import_default_modules()
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = False


def run(task: str) -> object:
    result = app.tasks[task].apply()
    assert result.successful(), result.traceback
    return result.result


def test_the_schedule_names_every_periodic_task_and_each_is_registered(eager):
    scheduled = {entry["task"] for entry in BEAT_SCHEDULE.values()}
    assert scheduled == set(COVERED)
    assert scheduled <= set(app.tasks)
    assert all(entry["schedule"] <= timedelta(minutes=30) for entry in BEAT_SCHEDULE.values())


def test_echo_memory_beat_runs_the_schedule(fleet):
    beat = fleet.beat()
    deadline = time.monotonic() + 120
    while '"beat: Starting..."' not in beat.output():
        assert beat.process.poll() is None, beat.output()
        assert time.monotonic() < deadline, beat.output()
        time.sleep(0.3)
    assert beat.stop() == 0
    # Every line it wrote is a JSON log line, like the web's.
    for line in beat.output().splitlines():
        assert json.loads(line)["logger"]
    # The schedule beat kept (its state, in the home) holds every entry of ours.
    with shelve.open(str(Path(fleet.env["ECHO_MEMORY_HOME"]) / "celerybeat-schedule")) as state:
        kept = {name: entry.task for name, entry in state["entries"].items()
                if not name.startswith("celery.")}
    assert kept == {name: entry["task"] for name, entry in BEAT_SCHEDULE.items()}


def _documents() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(documents), 0) FROM memories_corpusstat")
        return cursor.fetchone()[0]


def test_the_sweep_embeds_what_waits(alice, eager):
    ids = write_waiting_facts(alice, 3, "sweep")
    assert Fact.objects.filter(pk__in=ids, embedding__isnull=True).count() == 3
    assert run("memories.tasks.index_waiting") == 3
    assert Fact.objects.filter(pk__in=ids, embedding__isnull=True).count() == 0
    assert _documents() == 3
    assert run("memories.tasks.index_waiting") == 0  # nothing is embedded twice
    assert _documents() == 3


def test_after_a_model_change_every_vector_is_made_again_once(alice, eager):
    ids = write_waiting_facts(alice, 3, "model")
    run("memories.tasks.index_waiting")
    # The migration recorded the shipped model: nothing to re-embed.
    assert run("memories.tasks.reembed_after_model_change") == 0
    assert EmbeddingModelState.objects.get().model == reembedding.model_fingerprint()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, embedding::text FROM memories_fact WHERE id = ANY(%s)",
                       [ids])
        settled = dict(cursor.fetchall())
        # Vectors of "another model": every fact and entity name gets one fact's vector.
        cursor.execute("UPDATE memories_fact SET embedding = (SELECT embedding FROM "
                       "memories_fact WHERE id = %s) WHERE id = ANY(%s)", [ids[0], ids])
        cursor.execute("UPDATE memories_entity SET name_embedding = "
                       "(SELECT embedding::text::vector FROM memories_fact WHERE id = %s)",
                       [ids[0]])
    EmbeddingModelState.objects.update(model="an-earlier-model")
    documents = _documents()

    assert run("memories.tasks.reembed_after_model_change") == 3  # the facts' batch

    state = EmbeddingModelState.objects.get()
    assert (state.model, state.target) == (reembedding.model_fingerprint(), "")
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(1 - (embedding <=> v.old::halfvec)) FROM memories_fact f "
                       "JOIN unnest(%s::uuid[], %s::text[]) AS v(id, old) ON f.id = v.id",
                       [list(settled), list(settled.values())])
        assert cursor.fetchone()[0] > 0.999  # each fact's own vector again
        cursor.execute("SELECT count(DISTINCT name_embedding::text) FROM memories_entity")
        assert cursor.fetchone()[0] == Entity.objects.count()  # each name its own again
    assert _documents() == documents  # word statistics untouched: nothing counted twice
    assert run("memories.tasks.reembed_after_model_change") == 0  # done: nothing more


def test_idle_sessions_expire(alice, settings):
    now = timezone.now()
    idle = McpSession.objects.create(id="i" * 43, owner="k", account=alice.account,
                                     protocol_version="2025-06-18",
                                     last_seen_at=now - timedelta(
                                         seconds=settings.MCP_SESSION_IDLE_SECONDS + 60))
    live = McpSession.objects.create(id="l" * 43, owner="k", account=alice.account,
                                     protocol_version="2025-06-18", last_seen_at=now)
    signed_in = SessionStore()
    signed_in.set_expiry(-60)  # a browser session that has expired
    signed_in.create()
    assert run("mcp_gateway.tasks.expire_sessions") == 1
    assert list(McpSession.objects.values_list("pk", flat=True)) == [live.pk]
    assert not McpSession.objects.filter(pk=idle.pk).exists()
    assert not SessionStore().exists(signed_in.session_key)


def test_passed_rate_windows_are_deleted_each_by_its_own_window(db, settings, eager):
    settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, "signup_ip": "10/h"}
    now = timezone.now()
    RateLimitHit.objects.create(identity="key:1", at=now - timedelta(minutes=5))
    RateLimitHit.objects.create(identity="key:1", at=now)
    # A sign-up 5 minutes ago still counts in its hour; one 2 hours ago no longer does.
    RateLimitHit.objects.create(identity="limit:signup_ip:ab", at=now - timedelta(minutes=5))
    RateLimitHit.objects.create(identity="limit:signup_ip:ab", at=now - timedelta(hours=2))
    assert run("mcp_gateway.tasks.expire_rate_limits") == 2
    assert sorted(RateLimitHit.objects.values_list("identity", "at")) == [
        ("key:1", now), ("limit:signup_ip:ab", now - timedelta(minutes=5))]


def test_failed_billing_events_are_handled_again(db):
    created = timezone.now()
    # As receive() stores one: the whole event, already checked against its shape.
    payload = {"id": "evt_failed_once", "object": "event", "type": "customer.created",
               "created": int(created.timestamp()),
               "data": {"object": {"id": "cus_failed_once", "object": "customer"}}}
    StripeEvent.objects.create(id="evt_failed_once", type="customer.created",
                               created=created, payload=payload, attempts=1,
                               last_error="OperationalError: the database restarted",
                               outcome="failed")
    assert run("billing.tasks.retry_failed_events") == 1
    event = StripeEvent.objects.get()
    assert event.handled_at is not None and event.outcome == "ignored: customer.created"
    assert run("billing.tasks.retry_failed_events") == 0
