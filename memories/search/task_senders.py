"""The Celery tasks the indexer hands a write's facts to, as memories/tasks.py registers them.

The tasks are thin adapters over the indexer, so indexing.py sits below them and cannot
import them; the tasks module hands its tasks down here when it loads. A worker loads it
to run them, and memories/apps.py loads it at start-up in a process that indexes on Celery.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Senders(NamedTuple):
    embed_facts: Any  # the Celery task: embed_facts.delay(fact_ids)
    index_waiting: Any  # the Celery task: index_waiting.delay()


_registered: Senders | None = None


def register(senders: Senders) -> None:
    global _registered
    _registered = senders


def senders() -> Senders:
    if _registered is None:
        raise RuntimeError("ECHO_MEMORY_INDEXING=celery, but memories.tasks was not loaded "
                           "(memories/apps.py loads it when the process starts)")
    return _registered
