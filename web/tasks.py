"""Housekeeping of the web's tables, from Celery beat (echomem/celery.py)."""

from __future__ import annotations

import logging

from echomem.celery import RETRIED, app
from web.counting_cache import counters_expire

logger = logging.getLogger(__name__)


@app.task(**RETRIED)
def expire_rate_counters() -> int:
    """The sign-in and sign-up rate counters whose window has passed (kept in PostgreSQL
    without Redis; otherwise swept only now and then by a new window)."""
    expired = counters_expire()
    logger.info("expired %d rate counter(s)", expired)
    return expired
