"""Registrations software made for itself (RFC 7591, open to anyone) that were never used:
deleted once older than settings.STALE_REGISTRATION_SECONDS when no one ever connected them
(no Connection, live or revoked: a revoked one is the account's history) and they hold no
live token or code, with their registration access tokens. A periodic job: Celery beat's
`delete-stale-registrations` in production, the single box's housekeeping thread otherwise
(echomem/housekeeping.py).

Here rather than in oauth/ because the job runs from echomem, which imports no door; the
rows are django-oauth-toolkit's and the Connection is ours, both below oauth."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from oauth2_provider.settings import oauth2_settings

from accounts.models import Connection

BATCH = 500


def _stale(now):
    Application = get_application_model()
    live_access = (get_access_token_model().objects
                   .filter(application=OuterRef("pk"), expires__gt=now)
                   .exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE))
    live_refresh = get_refresh_token_model().objects.filter(application=OuterRef("pk"),
                                                            revoked__isnull=True)
    live_code = get_grant_model().objects.filter(application=OuterRef("pk"), expires__gt=now)
    return (Application.objects
            .filter(registration_source=Application.RegistrationSource.DCR,
                    created__lt=now - timedelta(seconds=settings.STALE_REGISTRATION_SECONDS))
            .exclude(Exists(Connection.objects.filter(application=OuterRef("pk"))))
            .exclude(Exists(live_access)).exclude(Exists(live_refresh))
            .exclude(Exists(live_code)))


def delete_stale_registrations(*, batch: int = BATCH) -> int:
    """Delete the stale registrations, `batch` at a time; how many were deleted."""
    deleted = 0
    while True:
        with transaction.atomic():
            now = timezone.now()
            # Locked, and checked again under the lock: a consent that arrives meanwhile
            # (its Connection row references the application) waits for this batch or is
            # skipped by it, and is never deleted with it.
            claimed = list(_stale(now).select_for_update(skip_locked=True)
                           .values_list("pk", flat=True)[:batch])
            still = list(_stale(now).filter(pk__in=claimed).values_list("pk", flat=True))
            # The registration access tokens (and anything else of theirs) go by cascade.
            get_application_model().objects.filter(pk__in=still).delete()
        deleted += len(still)
        if len(claimed) < batch:
            return deleted
