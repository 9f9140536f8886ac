"""The single box's periodic work without Celery: one daemon thread per web worker runs
what beat would send (echomem/celery.py BEAT_SCHEDULE) for the jobs listed here, every
INTERVAL_SECONDS. Each job is safe to run on several workers at once (it claims its rows),
so no worker needs to be the one that runs it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.db import connection

logger = logging.getLogger(__name__)
INTERVAL_SECONDS = 3600.0


def _jobs() -> list[tuple[str, Callable[[], object]]]:
    from accounts.key_expiry import expiring_keys_mail
    from accounts.stale_registrations import delete_stale_registrations

    return [("mail-expiring-keys", expiring_keys_mail),
            ("delete-stale-registrations", delete_stale_registrations)]


def run_once() -> None:
    for name, job in _jobs():
        try:
            job()
        except Exception:
            logger.exception("housekeeping job %s failed; it runs again in an hour", name)


def start() -> threading.Event:
    """Start the thread; set the returned event to stop it."""
    stopping = threading.Event()

    def loop() -> None:
        while True:
            try:
                run_once()
            finally:
                connection.close()  # not held between runs an hour apart
            if stopping.wait(INTERVAL_SECONDS):
                return

    threading.Thread(target=loop, name="echo-memory-housekeeping", daemon=True).start()
    return stopping
