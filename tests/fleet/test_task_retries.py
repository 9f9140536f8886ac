"""How embedding tasks are delivered and retried: acknowledged late, one at a time, and
retried with backoff when the database fails them."""

from __future__ import annotations

from django.db import OperationalError, connection

from echomem.celery import app
from memories.models import Fact
from memories.search.indexing import CLAIM_IDS
from memories.tasks import embed_facts
from tests.factories import write_waiting_facts


def test_a_task_is_acknowledged_after_it_ran_and_a_worker_takes_one_at_a_time():
    assert embed_facts.acks_late and embed_facts.reject_on_worker_lost
    assert app.conf.worker_prefetch_multiplier == 1
    # Retries back off, and never wait longer than Redis waits before redelivering.
    assert embed_facts.retry_backoff and embed_facts.retry_jitter
    assert embed_facts.retry_backoff_max < app.conf.broker_transport_options["visibility_timeout"]


def test_a_database_error_is_retried_and_the_retry_embeds_the_batch(alice):
    ids = write_waiting_facts(alice, 2, "retry")
    claims = []

    def first_claim_fails(execute, sql, params, many, context):
        if sql == CLAIM_IDS:
            claims.append(sql)
            if len(claims) == 1:
                raise OperationalError("the database system is shutting down")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(first_claim_fails):
        result = embed_facts.apply(args=[ids])
    assert result.successful() and result.result == 2
    assert len(claims) == 2  # failed once, retried once
    assert Fact.objects.filter(pk__in=ids, embedding__isnull=True).count() == 0
