"""`echo-memory worker` and `echo-memory beat`: the Celery processes of a deployment with a
broker (the single box embeds in process and needs neither)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from echomem.commands.common import clean_errors, prepare
from echomem.errors import ConfigurationError


@click.command()
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes.")
@click.option("--beat", "with_beat", is_flag=True,
              help="Also send the periodic tasks (as `echo-memory beat`): for a deployment "
                   "with this one worker only.")
@clean_errors
def worker(concurrency: int, with_beat: bool) -> None:
    """Run a Celery worker (production: embeds new facts, housekeeping).

    Needs REDIS_URL (or CELERY_BROKER_URL). The single box embeds in process and
    needs no worker. A task is acknowledged when it has finished: a worker killed
    mid-batch loses nothing, the broker hands the batch out again.
    """
    _require_broker("worker")
    runtime = prepare()
    from django.conf import settings

    from echomem.celery import app, log_like_the_web

    log_like_the_web()
    argv = [*_quiet(settings), "worker", "--loglevel=INFO", f"--concurrency={concurrency}"]
    if with_beat:
        argv += ["--beat", f"--schedule={_beat_schedule_file(runtime.home)}"]
    app.worker_main(argv)


@click.command()
@clean_errors
def beat() -> None:
    """Run Celery beat: send the periodic tasks to the workers.

    Catch-up indexing of anything waiting (every minute), re-embedding after a model
    change (every 10 minutes; nothing to do otherwise), expiry of idle MCP sessions and
    sign-in sessions, of rate-limit rows and counters, and retries of failed Stripe
    events. Run exactly one beat per deployment (two would send everything twice,
    harmless but wasted); it keeps its schedule's state in $ECHO_MEMORY_HOME.
    """
    _require_broker("beat")
    runtime = prepare()
    from django.conf import settings

    from echomem.celery import app, log_like_the_web

    log_like_the_web()
    app.start([*_quiet(settings), "beat", "--loglevel=INFO",
               f"--schedule={_beat_schedule_file(runtime.home)}"])


def _require_broker(command: str) -> None:
    if not (os.environ.get("CELERY_BROKER_URL") or os.environ.get("REDIS_URL")):
        raise ConfigurationError(
            f"the {command} needs a broker: set REDIS_URL (or CELERY_BROKER_URL); "
            "the single box embeds new facts in process and needs no worker."
        )


def _quiet(settings) -> list[str]:
    """With JSON logs, no start-up banner: every line out is one JSON object."""
    return ["--quiet"] if settings.LOG_FORMAT == "json" else []


def _beat_schedule_file(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    return home / "celerybeat-schedule"
