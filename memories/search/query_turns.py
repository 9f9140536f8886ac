"""Queries running in this process, and the indexer thread letting them go first.

On the single box the indexer is a thread of the web process (indexing.py), and its model
runs on the same two cores as a query's own embedding (the question, and the best waiting
candidates on the int8 copy: freshness.py). Embedding a 64-fact batch in one call, it held
both cores for a second or more at a time, and a query asked right after a bulk write
shared them with it (issue 42: p95 about 300 ms, against 30 settled). So the indexer
thread embeds its batch in short turns, and begins each only once no query runs, so that
a query shares the cores with at most the rest of one turn. It is never starved: a turn
that has waited GIVE_WAY_SECONDS begins beside whatever query runs. Elsewhere (Celery
workers, `echo-memory index`) no query runs in the indexer's process and nothing waits.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

# Facts the indexer thread embeds in one turn: a query that arrives while a turn runs
# shares the cores with the rest of it. bench/catch_up.py (LoCoMo's 2,760 facts, then its
# 759 questions at once over /mcp; load 5-8 from other jobs; docs/benchmarks.md), query
# p50 / p95 in ms: turns of 2: 84-86 / 140-145, of 1: 84 / 142 (drain 94 s against 85),
# of 4: 91-101 / 168-208, the batch in one call (before): 104-121 / 212-301. Short calls
# cost the indexer nothing: its drain beside the questions went from 97-128 s to 80-86.
TURN_FACTS = 2
# Longest a turn waits for running queries before it begins regardless: the indexer's
# share of the cores under a steady stream of questions (0: it never waits). Not tuned:
# with one client asking back to back, turns begin in the gaps between questions long
# before this (1,380 turns in 80-86 s, far more than one per 0.2 s).
GIVE_WAY_SECONDS = 0.2

_running = 0
_changed = threading.Condition()

Function = TypeVar("Function", bound=Callable)


def queries_first(function: Function) -> Function:
    """Count `function`'s calls as queries running while they run."""
    @functools.wraps(function)
    def counted(*args, **kwargs):
        global _running
        with _changed:
            _running += 1
        try:
            return function(*args, **kwargs)
        finally:
            with _changed:
                _running -= 1
                if not _running:
                    _changed.notify_all()
    return counted  # type: ignore[return-value]


def running() -> int:
    """How many queries run in this process now."""
    return _running


def wait_for_queries(seconds: float) -> bool:
    """Wait until no query runs, at most `seconds`; whether none runs on return."""
    with _changed:
        return _changed.wait_for(lambda: not _running, timeout=seconds)


def in_turns(texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """`embed` over `texts` in turns of TURN_FACTS, each begun once no query runs (or once
    it has waited GIVE_WAY_SECONDS). Texts of like length go together, as one call would
    batch them."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors: np.ndarray | None = None
    for start in range(0, len(order), TURN_FACTS):
        rows = order[start:start + TURN_FACTS]
        if GIVE_WAY_SECONDS > 0:
            wait_for_queries(GIVE_WAY_SECONDS)
        turn = embed([texts[i] for i in rows])
        if vectors is None:
            vectors = np.empty((len(texts), turn.shape[1]), dtype=turn.dtype)
        vectors[rows] = turn
    return vectors if vectors is not None else np.empty((0, 0), dtype=np.float32)
