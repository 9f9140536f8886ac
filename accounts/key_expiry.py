"""The week's notice before a key expires: its holder is mailed once per key, by a periodic
job (Celery beat's `mail-expiring-keys` in production, the single box's housekeeping thread
otherwise: echomem/housekeeping.py). Claiming the key and sending are one transaction, so a
job that runs twice, or on two workers at once, mails once; a mail that fails is tried again
next time."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiKey
from echomem.public_url import public_url

logger = logging.getLogger(__name__)
EXPIRY_WARNING = timedelta(days=7)


def expiring_keys_mail(*, now: datetime | None = None) -> int:
    """Mail the holder of each live key that expires within EXPIRY_WARNING and was not
    mailed yet; how many mails were sent."""
    now = now or timezone.now()
    due = ApiKey.objects.filter(revoked_at__isnull=True, expiry_mailed_at__isnull=True,
                                expires_at__gt=now, expires_at__lte=now + EXPIRY_WARNING)
    sent = 0
    for key_id in due.values_list("pk", flat=True).order_by("expires_at"):
        with transaction.atomic():
            key = (ApiKey.objects.select_for_update(skip_locked=True)
                   .filter(pk=key_id, expiry_mailed_at__isnull=True)
                   .select_related("holder").first())
            if key is None or not key.holder.email:
                continue
            ApiKey.objects.filter(pk=key.pk).update(expiry_mailed_at=now)
            send_mail(*_mail(key), None, [key.holder.email])
            sent += 1
    if sent:
        logger.info("mailed %d key holder(s) of a key expiring within a week", sent)
    return sent


def _mail(key: ApiKey) -> tuple[str, str]:
    when = f"{key.expires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    subject = f"Your Echo Memory key {key.name} expires on {when:.10}"
    body = (f"Your API key em_{key.prefix}_… ({key.name}, for {key.tool}) stops working at "
            f"{when}.\n\nAgents that use it are refused from then on. To keep them working, "
            "create a new key on the dashboard (it may carry the same limits) and give it to "
            f"the agent before then:\n\n{public_url(reverse('web:dashboard'))}\n\n"
            "Nothing needs doing if the key is no longer used.\n")
    return subject, body
