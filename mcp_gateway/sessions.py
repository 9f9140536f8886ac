"""MCP sessions: opened by initialize, bound to the caller, slid forward on use, ended by DELETE.

Each process keeps the sessions it has just read for TTL_SECONDS (echomem/short_memory.py),
so a session's requests cost no lookup while they come fast: a session ended or expired
through another process is refused here within that bound, and at once in the process
that ended it.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.principal import Principal
from accounts.redaction_settings import redactor_for
from echomem.short_memory import ShortMemory
from mcp_gateway.jsonrpc import RpcError
from mcp_gateway.models import McpSession

# Sliding expiry without a write per request: last_seen_at moves at most once a minute.
TOUCH_RESOLUTION = timedelta(minutes=1)
GONE = ("session not found: it ended, expired or was never issued to this key; send "
        "initialize again (without Mcp-Session-Id) to open a new one")
# What session_open issues (token_urlsafe(32): 43 characters); anything else was never issued.
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{20,64}")
TTL_SECONDS = 0.5
# (session id, owner) -> (protocol version, last_seen_at) as last read or touched here.
_recent: ShortMemory[tuple[str, str], tuple[str, datetime]] = ShortMemory(
    TTL_SECONDS, max_entries=10_000)
forget = _recent.forget


def _gone() -> RpcError:
    return RpcError(-32001, GONE, data={"field": "Mcp-Session-Id"}, http_status=404)


def _idle_limit() -> timedelta:
    return timedelta(seconds=settings.MCP_SESSION_IDLE_SECONDS)


def session_open(principal: Principal, *, protocol_version: str,
                 client_info: dict | None) -> McpSession:
    now = timezone.now()
    owner = principal.identity
    # Housekeeping rides on initialize: this owner's idle sessions are of no use to anyone.
    McpSession.objects.filter(owner=owner, last_seen_at__lt=now - _idle_limit()).delete()
    info = client_info if isinstance(client_info, dict) else {}
    # The client's own words, stored: redacted like a tool call's free text.
    redactor = redactor_for(principal.account_id)
    name, _ = redactor.text(str(info.get("name", "")))
    version, _ = redactor.text(str(info.get("version", "")))
    return McpSession.objects.create(
        id=secrets.token_urlsafe(32), owner=owner, account_id=principal.account_id,
        protocol_version=protocol_version, client_name=name[:200],
        client_version=version[:100], last_seen_at=now,
    )


def session_for(principal: Principal, session_id: str) -> McpSession:
    """The caller's live session; anything else (ended, idle, someone else's) is one 404."""
    if not SESSION_ID.fullmatch(session_id):
        raise _gone()
    now = timezone.now()
    key = (session_id, principal.identity)
    row = _recent.get(key)
    if row is None:
        # A plain query: this runs on every request of a session, and composing it
        # through the ORM cost more than the indexed lookup it makes.
        with connection.cursor() as cursor:
            cursor.execute("SELECT protocol_version, last_seen_at FROM mcp_gateway_mcpsession "
                           "WHERE id = %s AND owner = %s AND ended_at IS NULL",
                           [session_id, principal.identity])
            row = cursor.fetchone()
        if row is not None:
            _recent.put(key, row)
    if row is None or row[1] < now - _idle_limit():
        raise _gone()
    session = McpSession.from_db(connection.alias, ["id", "protocol_version", "last_seen_at"],
                                 (session_id, *row))
    if now - session.last_seen_at >= TOUCH_RESOLUTION:
        McpSession.objects.filter(pk=session.pk).update(last_seen_at=now)
        _recent.update(key, lambda kept: (kept[0], now))
    return session


def session_end(principal: Principal, session_id: str) -> None:
    ended = SESSION_ID.fullmatch(session_id) and McpSession.objects.filter(
        id=session_id, owner=principal.identity, ended_at__isnull=True,
        last_seen_at__gte=timezone.now() - _idle_limit(),
    ).update(ended_at=timezone.now())
    if not ended:
        raise _gone()
    # Refused here from now on, and again after the commit (a request of this process
    # may read the row back in between).
    forget((session_id, principal.identity))
    transaction.on_commit(lambda: forget((session_id, principal.identity)))


def sessions_expire() -> int:
    """Delete every session idle past the limit (ended ones too, once as old); returns how
    many. Beat's housekeeping, for the owners who never initialize again."""
    cutoff = timezone.now() - _idle_limit()
    return McpSession.objects.filter(last_seen_at__lt=cutoff).delete()[0]
