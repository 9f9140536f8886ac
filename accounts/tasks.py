"""Accounts' periodic work, from Celery beat (echomem/celery.py); a single box without
Celery runs the same functions in its housekeeping thread (echomem/housekeeping.py)."""

from __future__ import annotations

from accounts.key_expiry import expiring_keys_mail
from accounts.stale_registrations import delete_stale_registrations
from echomem.celery import RETRIED, app


@app.task(**RETRIED)
def mail_expiring_keys() -> int:
    """Mail each key's holder a week before the key expires (once per key)."""
    return expiring_keys_mail()


@app.task(**RETRIED)
def delete_stale_oauth_registrations() -> int:
    """Delete dynamically registered OAuth clients that were never connected."""
    return delete_stale_registrations()
