"""The Celery app: production runs embedding and housekeeping here (broker: REDIS_URL)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")

app = Celery("echomem")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
