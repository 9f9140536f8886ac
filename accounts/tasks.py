"""Accounts' periodic work, from Celery beat (echomem/celery.py); a single box without
Celery runs the same functions in its housekeeping thread (echomem/housekeeping.py)."""

from __future__ import annotations

from accounts.key_expiry import expiring_keys_mail
from echomem.celery import RETRIED, app


@app.task(**RETRIED)
def mail_expiring_keys() -> int:
    """Mail each key's holder a week before the key expires (once per key)."""
    return expiring_keys_mail()
