"""The engine's Celery tasks: thin adapters over memories/search/indexing.py and reembedding.py.

A task is acknowledged only when it has finished (settings.py), so any task may run twice:
after its worker was killed mid-batch, the broker delivers it again. Each one is therefore
idempotent: it claims only what still waits (indexing's claim), and what a dead worker
had claimed was rolled back with its connection. Each run is one batch, so a redelivery
redoes at most one batch, and stays well inside the broker's visibility timeout. What a
batch leaves waiting because another transaction held it, the task looks at again after a
bounded pause, so the workers drain without beat (beat's sweep remains for writes made
while the broker was down).
"""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from echomem.celery import RETRIED, app
from memories.search import indexing, reembedding, task_senders

logger = logging.getLogger(__name__)


@app.task(bind=True, **RETRIED)
def embed_facts(self, fact_ids: list[str], pause: float = 0.0) -> int:
    """Embed and index those of these facts (one write's, one batch) that still wait.

    A fact another transaction held is skipped by the claim; if it still waits once this
    batch is stored (its holder rolled back, or stored no vector), the task sends itself
    again for those facts alone, `pause` seconds later, doubling up to the sweep's interval
    (indexing.next_retry), until none waits: no fact is left to beat's sweep.
    """
    done = indexing.index_fact_ids(fact_ids, claimed=_hold_if_asked)
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    logger.info("embedded %d of %d fact(s)", done, len(fact_ids),
                extra={"facts": done, "redelivered": redelivered})
    left = indexing.still_waiting(fact_ids)
    if left:
        pause = indexing.next_retry(pause)
        logger.info("%d fact(s) were held by another transaction; looking again in %.1f s",
                    len(left), pause, extra={"facts": len(left)})
        embed_facts.apply_async((left,), {"pause": pause}, countdown=pause)
    return done


@app.task(**RETRIED)
def index_waiting(since: str | None = None, pause: float = 0.0) -> int:
    """The catch-up sweep (beat, and after writes that name no facts): one batch of
    whatever waits, in fair turns across partitions.

    It sends itself again until nothing that already waited when it was first sent
    (`since`, set on the first run) still waits: at once after a full batch (more may
    wait), otherwise `pause` seconds later, doubling up to the sweep's interval (what is
    left is held by other transactions, which may roll back). What was written after
    `since` has a task of its own, so a chain ends even while writes keep coming.
    """
    since = since or timezone.now().isoformat()
    done = indexing.index_pending(limit=indexing.BATCH_SIZE)
    if done:
        logger.info("swept %d waiting fact(s) or note(s)", done, extra={"facts": done})
    if done == indexing.BATCH_SIZE:
        index_waiting.delay(since)
    elif indexing.waiting_since(datetime.fromisoformat(since)):
        pause = indexing.next_retry(pause)
        index_waiting.apply_async((since,), {"pause": pause}, countdown=pause)
    return done


@app.task(**RETRIED)
def reembed_after_model_change() -> int:
    """One batch of re-embedding when the stored vectors come from another model than the
    one this worker runs (memories/search/reembedding.py); does nothing otherwise."""
    step = reembedding.reembed_step()
    if step.reembedded:
        logger.info("re-embedded %d row(s) for the new model", step.reembedded)
    if step.more:
        reembed_after_model_change.delay()
    return step.reembedded


# The indexer sends a write's facts to these (memories/search/task_senders.py).
task_senders.register(task_senders.Senders(embed_facts=embed_facts, index_waiting=index_waiting))


def _hold_if_asked(claimed: list[str]) -> None:
    """Test-only (ECHO_MEMORY_TEST_HOLD_BATCH, a folder): say which facts this batch
    claimed, then wait, inside the batch, until a `release` file appears there, so a test
    can kill the worker at exactly this point."""
    folder = settings.ECHO_MEMORY_TEST_HOLD_BATCH
    if not folder:
        return
    folder = Path(folder)
    # Written aside and renamed into place: the test polls for held-*.json and must never
    # find the file before its contents.
    name = f"held-{time.time_ns()}.json"
    (folder / f".{name}").write_text(json.dumps({"facts": claimed, "pid": os.getpid()}))
    (folder / f".{name}").rename(folder / name)
    while not (folder / "release").exists():
        time.sleep(0.05)
