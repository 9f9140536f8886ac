"""A web worker told to quit exits even when the signal lands inside its thread pool."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from echomem.server import JsonErrorWorker


def test_quit_during_a_submit_exits_instead_of_waiting_on_the_pools_lock():
    # What the main thread holds while submit starts a pool thread: the pool's lock. The
    # signal handler then runs on that same thread (gthread's own handler shut the pool
    # down first, and waited on that lock forever).
    worker = object.__new__(JsonErrorWorker)
    worker.tpool = ThreadPoolExecutor(max_workers=1)
    worker.cfg = SimpleNamespace(worker_int=lambda _: None)
    worker.alive = True
    outcome: list[str] = []

    def signal_during_submit() -> None:
        with worker.tpool._shutdown_lock:
            try:
                worker.handle_quit(None, None)
            except SystemExit as exc:
                outcome.append(f"exit {exc.code}")

    handler = threading.Thread(target=signal_during_submit, daemon=True)
    handler.start()
    handler.join(10)
    assert outcome == ["exit 0"], "the quit handler hung on the thread pool's lock"
    assert worker.alive is False
    worker.tpool.shutdown()
