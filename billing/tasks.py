"""Billing housekeeping, from Celery beat (echomem/celery.py)."""

from __future__ import annotations

import logging

from billing import webhooks
from echomem.celery import RETRIED, app

logger = logging.getLogger(__name__)


@app.task(**RETRIED)
def retry_failed_events() -> int:
    """Handle again the Stripe events whose handling failed (what `billing_events
    --retry-failed` does), so a plan change a passing fault held back reaches the ledger."""
    handled, failing = webhooks.handle_failed()
    if handled or failing:
        logger.info("re-handled %d Stripe event(s); %d still failing", handled, failing)
    return handled
