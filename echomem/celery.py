"""The Celery app: production runs embedding and housekeeping here (broker: REDIS_URL).

Its settings are the CELERY_* ones in echomem/settings.py (late acknowledgement, one task
at a time per worker process); what runs periodically is BEAT_SCHEDULE below, sent by
`echo-memory beat`. Tasks bind to this app by importing it, so a web process that has
never run a worker sends them to the configured broker.
"""

import contextlib
import logging
import os
import sys
from datetime import timedelta

from celery import Celery, current_task
from celery.signals import setup_logging
from celery.utils.log import get_multiprocessing_logger
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")

app = Celery("echomem")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# What every task retries on: the database restarting, failing over or timing out a
# statement. Backoff doubles from 2 s to at most 2 minutes, jittered so that a fleet's
# retries do not arrive together (below the broker's visibility timeout: settings.py).
RETRIED = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": 10,
}

# Names are the tasks' own (module.function); docs/self-hosting.md lists what each does.
BEAT_SCHEDULE = {
    "index-waiting": {"task": "memories.tasks.index_waiting",
                      "schedule": timedelta(minutes=1)},
    "reembed-after-model-change": {"task": "memories.tasks.reembed_after_model_change",
                                   "schedule": timedelta(minutes=10)},
    "expire-sessions": {"task": "mcp_gateway.tasks.expire_sessions",
                        "schedule": timedelta(minutes=15)},
    "expire-rate-limits": {"task": "mcp_gateway.tasks.expire_rate_limits",
                           "schedule": timedelta(minutes=5)},
    "retry-billing-events": {"task": "billing.tasks.retry_failed_events",
                             "schedule": timedelta(minutes=30)},
    "mail-expiring-keys": {"task": "accounts.tasks.mail_expiring_keys",
                           "schedule": timedelta(minutes=30)},
    "delete-stale-registrations": {"task": "accounts.tasks.delete_stale_oauth_registrations",
                                   "schedule": timedelta(minutes=30)},
}
app.conf.beat_schedule = BEAT_SCHEDULE


class TaskFields(logging.Filter):
    """Name the running task (and its id) on every line written while it runs."""

    def filter(self, record: logging.LogRecord) -> bool:
        task = current_task
        if task and task.request.id and not hasattr(record, "task_id"):
            record.task = task.name
            record.task_id = task.request.id
        return True


@setup_logging.connect
def _log_like_the_web(**_: object) -> None:
    """Workers and beat keep Django's LOGGING (ECHO_MEMORY_LOG_FORMAT: one JSON object per
    line, or text), set up by django.setup(); Celery's own handlers are never installed."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(TaskFields())
    # The pool's own logger (a lost pool process) does not propagate by default, and
    # Python then prints its lines bare.
    get_multiprocessing_logger().propagate = True


def log_like_the_web() -> None:
    """For `echo-memory worker` and `beat`, before Celery starts: Python's warnings become
    log lines, and so do the notices Celery prints when it is told to stop."""
    from django.conf import settings

    logging.captureWarnings(True)
    if settings.LOG_FORMAT == "json":
        import celery.apps.worker

        celery.apps.worker.safe_say = _say_as_json


def _say_as_json(message: str, stream=sys.__stderr__) -> None:
    """Celery's shutdown notices come from signal handlers, written with a bare os.write (a
    logging handler's lock could deadlock there); this writes them the same way, as JSON."""
    from echomem.logs import JsonFormatter

    record = logging.LogRecord("celery.apps.worker", logging.WARNING, __file__, 0,
                               message.strip(), None, None)
    with contextlib.suppress(OSError):
        os.write(stream.fileno(), (JsonFormatter().format(record) + "\n").encode())
