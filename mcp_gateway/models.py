from __future__ import annotations

from django.db import models


class McpSession(models.Model):
    """An MCP session, kept in Postgres so that any web worker can serve it.

    Bound to the principal that opened it (`owner`: the key, or the self-hosted
    identity): any other caller gets the same 404 as for a session that never existed.
    """

    id = models.CharField(primary_key=True, max_length=64, editable=False)
    owner = models.CharField(max_length=200, editable=False)
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    protocol_version = models.CharField(max_length=20)
    client_name = models.CharField(max_length=200, blank=True)
    client_version = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "MCP session"
        indexes = [models.Index(fields=["owner", "last_seen_at"], name="mcpsession_by_owner")]


class RateLimitHit(models.Model):
    """One counted request, for the database rate limiter (the single box has no Redis)."""

    identity = models.CharField(max_length=200)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["identity", "at"], name="ratelimithit_window")]
