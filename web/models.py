from __future__ import annotations

from django.conf import settings
from django.db import models


class UnverifiedEmail(models.Model):
    """A person who signed up while ECHO_MEMORY_VERIFY_EMAIL was on and has not opened the
    link yet. Confirming deletes the row, so people who never needed to (the quickstart
    owner, invited members, staff) are verified by having none."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                primary_key=True, related_name="unverified_email")
    email = models.EmailField(max_length=254)
    created_at = models.DateTimeField(auto_now_add=True)
