"""Housekeeping of the gateway's tables, from Celery beat (echomem/celery.py)."""

from __future__ import annotations

import logging
from importlib import import_module

from django.conf import settings

from echomem.celery import RETRIED, app
from echomem.ratelimit import hits_expire
from mcp_gateway.sessions import sessions_expire

logger = logging.getLogger(__name__)


@app.task(**RETRIED)
def expire_sessions() -> int:
    """MCP sessions idle past their limit, and the browser's expired sign-in sessions."""
    expired = sessions_expire()
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    logger.info("expired %d MCP session(s)", expired)
    return expired


@app.task(**RETRIED)
def expire_rate_limits() -> int:
    """Counted requests whose window has passed, the API's and the web's limits alike (the
    PostgreSQL limiter trims an identity only when it asks again; Redis expires its own
    keys)."""
    expired = hits_expire()
    logger.info("expired %d rate-limit row(s)", expired)
    return expired
