"""The single box's indexer thread lets this process's queries go first, and still drains
(memories/search/query_turns.py).

Real threads and the real model: a query is held open by a function counted as one
(`queries_first`), the indexer's turns are only watched (each call recorded), never replaced.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from memories.models import Fact
from memories.search import indexing, partition_counts, query_turns
from memories.search.embeddings import get_embedder
from tests.factories import Engine, fact, person

TEXTS = [f"Alice lent Bob bicycle number {i} for the weekend ride to the lake" for i in range(6)]
PEOPLE = [person("Alice"), person("Bob")]
SETTLES = 30.0  # seconds anything here may take on a loaded machine; never a figure


class HeldQuery:
    """A query that runs, in its own thread, until released."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=query_turns.queries_first(self._run))

    def _run(self) -> None:
        self.started.set()
        self.release.wait(SETTLES)

    def __enter__(self) -> HeldQuery:
        self.thread.start()
        assert self.started.wait(SETTLES)
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.thread.join(SETTLES)


class Turns:
    """The indexer's embedding in turns, in a thread of its own, every call recorded with
    the number of queries running when it began."""

    def __init__(self, texts: list[str]) -> None:
        self.calls: list[dict] = []
        self.called = threading.Event()
        self.vectors: np.ndarray | None = None
        self.thread = threading.Thread(target=self._run, args=(texts,))

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append({"texts": len(texts), "queries": query_turns.running()})
        self.called.set()
        return get_embedder().embed(texts, bulk=True)

    def _run(self, texts: list[str]) -> None:
        self.vectors = query_turns.in_turns(texts, self.embed)

    def start(self) -> Turns:
        self.thread.start()
        return self

    def join(self) -> np.ndarray:
        self.thread.join(SETTLES)
        assert not self.thread.is_alive()
        return self.vectors


def test_queries_are_counted_while_they_run_and_after_an_error():
    def failing():
        assert query_turns.running() == 1
        raise ValueError("the query failed")

    with pytest.raises(ValueError):
        query_turns.queries_first(failing)()
    assert query_turns.running() == 0


@pytest.mark.django_db
def test_query_memory_counts_as_a_running_query_while_it_runs(alice, monkeypatch):
    seen = []
    counts = partition_counts.statement

    def watched(*args):
        seen.append(query_turns.running())
        return counts(*args)

    monkeypatch.setattr(partition_counts, "statement", watched)
    Engine(alice.principal).query("Who lent a bicycle?")

    assert seen == [1] and query_turns.running() == 0


def test_the_indexer_waits_while_a_query_runs_and_embeds_once_it_ends(monkeypatch):
    monkeypatch.setattr(query_turns, "GIVE_WAY_SECONDS", SETTLES)
    monkeypatch.setattr(query_turns, "TURN_FACTS", 4)
    with HeldQuery():
        turns = Turns(TEXTS).start()
        assert not turns.called.wait(0.5)  # nothing embedded while the query runs
    vectors = turns.join()

    assert [call["texts"] for call in turns.calls] == [4, 2]
    assert all(call["queries"] == 0 for call in turns.calls)
    # In turns, shortest first, the vectors still land on their own texts.
    assert np.allclose(vectors, get_embedder().embed(TEXTS), atol=1e-5)


def test_a_turn_begins_beside_a_query_once_it_has_waited_long_enough(monkeypatch):
    monkeypatch.setattr(query_turns, "GIVE_WAY_SECONDS", 0.05)
    monkeypatch.setattr(query_turns, "TURN_FACTS", 4)
    with HeldQuery():  # a query that outlasts every turn's wait
        vectors = (turns := Turns(TEXTS).start()).join()

    assert [(call["texts"], call["queries"]) for call in turns.calls] == [(4, 1), (2, 1)]
    assert np.allclose(vectors, get_embedder().embed(TEXTS), atol=1e-5)


@pytest.mark.django_db(transaction=True)
def test_the_indexer_thread_drains_while_queries_never_stop(alice, settings, monkeypatch):
    settings.ECHO_MEMORY_INDEXING = "thread"
    monkeypatch.setattr(indexing, "_background", None)
    monkeypatch.setattr(query_turns, "GIVE_WAY_SECONDS", 0.05)
    engine = Engine(alice.principal)
    try:
        with HeldQuery():  # a query that runs from before the write to after the drain
            engine.write(session_id="loans", entities=PEOPLE, assume_new=True,
                         facts=[fact("Alice", "Bob", f"lent_{i}", text)
                                for i, text in enumerate(TEXTS)])
            waiting = Fact.objects.filter(embedding__isnull=True)
            deadline = time.monotonic() + SETTLES
            while waiting.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not waiting.exists(), "the indexer left facts waiting behind a query"
            assert query_turns.running() == 1
    finally:
        indexing.stop_background(SETTLES)
