"""MCP sessions: opened by initialize, bound to the caller, slid forward on use, ended by DELETE."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from accounts.principal import Principal
from mcp_gateway.jsonrpc import RpcError
from mcp_gateway.models import McpSession

# Sliding expiry without a write per request: last_seen_at moves at most once a minute.
TOUCH_RESOLUTION = timedelta(minutes=1)
GONE = ("session not found: it ended, expired or was never issued to this key; send "
        "initialize again (without Mcp-Session-Id) to open a new one")


def owner_of(principal: Principal) -> str:
    """Who a session (and a rate-limit window) belongs to: the key, or the keyless box user."""
    if principal.key_id is not None:
        return f"key:{principal.key_id}"
    return f"self-hosted:{principal.holder_id}:{principal.tool}"


def _idle_limit() -> timedelta:
    return timedelta(seconds=settings.MCP_SESSION_IDLE_SECONDS)


def session_open(principal: Principal, *, protocol_version: str,
                 client_info: dict | None) -> McpSession:
    now = timezone.now()
    owner = owner_of(principal)
    # Housekeeping rides on initialize: this owner's idle sessions are of no use to anyone.
    McpSession.objects.filter(owner=owner, last_seen_at__lt=now - _idle_limit()).delete()
    info = client_info if isinstance(client_info, dict) else {}
    return McpSession.objects.create(
        id=secrets.token_urlsafe(32), owner=owner, account_id=principal.account_id,
        protocol_version=protocol_version, client_name=str(info.get("name", ""))[:200],
        client_version=str(info.get("version", ""))[:100], last_seen_at=now,
    )


def session_for(principal: Principal, session_id: str) -> McpSession:
    """The caller's live session; anything else (ended, idle, someone else's) is one 404."""
    now = timezone.now()
    session = McpSession.objects.filter(
        id=session_id[:64], owner=owner_of(principal), ended_at__isnull=True,
        last_seen_at__gte=now - _idle_limit(),
    ).first()
    if session is None:
        raise RpcError(-32001, GONE, http_status=404)
    if now - session.last_seen_at >= TOUCH_RESOLUTION:
        McpSession.objects.filter(pk=session.pk).update(last_seen_at=now)
    return session


def session_end(principal: Principal, session_id: str) -> None:
    ended = McpSession.objects.filter(
        id=session_id[:64], owner=owner_of(principal), ended_at__isnull=True,
        last_seen_at__gte=timezone.now() - _idle_limit(),
    ).update(ended_at=timezone.now())
    if not ended:
        raise RpcError(-32001, GONE, http_status=404)
