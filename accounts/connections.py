"""Connections: apps a person let act for them in one account (OAuth clients), and the
Principal an access token becomes. A connection carries a key's limits (read only, the
memories it may use, a default memory) and obeys them through the same checks
(accounts/limits.py); what it may do is also in its tokens' scopes (memory:read, and
memory:write unless it may only read).

Tokens are django-oauth-toolkit's (stored hashed: only a SHA-256 checksum is kept); a
token points to its connection by its (user, application) pair, of which one connection is
live at a time (the consent page changes it, revoking ends it and every token under it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import models, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from accounts import keys
from accounts.account_events import account_event
from accounts.limits import check_memory_choice
from accounts.models import Connection, Membership
from accounts.principal import Principal
from accounts.security_events import APP_CONNECTED, record_security_event
from echomem import oauth_addresses
from echomem.errors import AuthenticationFailed, NotFound

# As for keys: writing last_used_at on every request would turn each read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)
TOKEN_FIX = ("let your app sign in again (it runs the OAuth flow and opens the consent page), "
             "or send an API key from the dashboard instead")
# The tool label column holds 64 characters: a client ID that is a URL (a client ID metadata
# document) is named by its host and a digest of the whole URL instead.
TOOL_PREFIX = "oauth:"
TOOL_MAX = 64


class TokenRefused(AuthenticationFailed):
    """An access token refused at /mcp; `error` is RFC 6750's code for the challenge and
    `identity` the connection a known token belongs to (its failures count there, not
    against the address it came from)."""

    def __init__(self, message: str, *, error: str = "invalid_token",
                 identity: str | None = None):
        super().__init__(message, field="Authorization", fix=TOKEN_FIX)
        self.error = error
        self.identity = identity


def tool_label(client_id: str) -> str:
    """`oauth:<client_id>`: the client's registered identifier, never a name it chose (an
    app that calls itself claude-code does not read a key's solo facts)."""
    label = TOOL_PREFIX + client_id
    if len(label) <= TOOL_MAX:
        return label
    host = (client_id.split("://", 1)[-1].split("/", 1)[0])[:30]
    digest = hashlib.sha256(client_id.encode()).hexdigest()[:16]
    return f"{TOOL_PREFIX}{host}#{digest}"


def is_access_token(token: str) -> bool:
    return keys.looks_like_access_token(token)


def principal_from_access_token(token: str, *, now: datetime | None = None) -> Principal:
    now = now or timezone.now()
    checksum = hashlib.sha256(token.encode("utf-8")).hexdigest()
    found = get_access_token_model().objects.filter(token_checksum=checksum).first()
    if found is None or found.user_id is None:
        raise TokenRefused("the access token is not valid (unknown, revoked or replaced)")
    # Two round trips per request in all (the token, then its connection with whether its
    # person is still a member), as a key's first use costs.
    connection = (Connection.objects.filter(user_id=found.user_id,
                                            application_id=found.application_id,
                                            revoked_at__isnull=True)
                  .annotate(member=Exists(Membership.objects.filter(
                      user_id=OuterRef("user_id"), account_id=OuterRef("account_id"))))
                  .first())
    identity = f"connection:{connection.pk}" if connection else None
    if now >= found.expires:
        expired = found.expires.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        raise TokenRefused(f"the access token expired at {expired} UTC; refresh it",
                           identity=identity)
    resource = oauth_addresses.mcp_resource()
    if resource not in (found.resource or []):
        raise TokenRefused(f"the access token was issued for another resource, not {resource}; "
                           "ask for a token with resource=" + resource, identity=identity)
    scopes = frozenset(found.scope.split())
    if settings.READ_SCOPE not in scopes:
        raise TokenRefused(f"the access token does not carry the {settings.READ_SCOPE} scope",
                           error="insufficient_scope", identity=identity)
    if connection is None:
        raise TokenRefused("this app's connection was revoked; connect it again")
    if not connection.member:
        raise TokenRefused("the person who connected this app is no longer a member of the "
                           "account", identity=identity)
    _touch(connection, now)
    return Principal(account_id=connection.account_id, holder_id=connection.user_id,
                     tool=connection.tool, default_memory_id=connection.default_memory_id,
                     read_only=connection.read_only or settings.WRITE_SCOPE not in scopes,
                     memory_ids=(None if connection.memory_ids is None
                                 else frozenset(connection.memory_ids)),
                     expires_at=found.expires, connection_id=connection.pk, scopes=scopes)


def _touch(connection: Connection, now: datetime) -> None:
    if connection.last_used_at is None or now - connection.last_used_at >= LAST_USED_RESOLUTION:
        Connection.objects.filter(pk=connection.pk).update(last_used_at=now)


@transaction.atomic
def connect(*, user, account_id: int, application, read_only: bool,
            memories: Sequence[models.Model] | None, default_memory: models.Model | None,
            network: str | None = None) -> Connection:
    """What the person chose on the consent page: a new connection, or their live one with
    this app changed (tokens it holds act under the new choice from their next request;
    moved to another account, they are revoked first). `memories` as for a key (None:
    every one; else the default among them), checked by the same rule."""
    if not Membership.objects.filter(user=user, account_id=account_id).exists():
        raise NotFound("you are not a member of that account", field="account",
                       fix="pick one of your accounts")
    check_memory_choice(account_id=account_id, memories=memories,
                        default_memory=default_memory, holder="app")
    now = timezone.now()
    chosen = {"account_id": account_id, "read_only": read_only,
              "memory_ids": None if memories is None else sorted({m.pk for m in memories}),
              "default_memory_id": default_memory.pk if default_memory else None,
              "consented_at": now}
    live = (Connection.objects.select_for_update()
            .filter(user=user, application=application, revoked_at__isnull=True).first())
    if live is not None and live.account_id != account_id:
        _revoke(live, actor_id=user.pk, now=now)
        live = None
    if live is None:
        connection = Connection.objects.create(user=user, application=application,
                                               tool=tool_label(application.client_id), **chosen)
        action = "connection.created"
    else:
        Connection.objects.filter(pk=live.pk).update(**chosen)
        connection = Connection.objects.get(pk=live.pk)
        action = "connection.changed"
    account_event(account_id=account_id, actor_id=user.pk, action=action,
                  object_id=connection.pk, after=summary(connection), tool="web")
    if action == "connection.created":
        record_security_event(user=user, kind=APP_CONNECTED, network=network,
                              account_id=account_id,
                              detail={"app": application.name or application.client_id})
    return connection


def summary(connection: Connection) -> dict[str, object]:
    """A connection as the audit log records it."""
    return {"app": connection.application.name or connection.application.client_id,
            "client_id": connection.application.client_id, "user": connection.user_id,
            "tool": connection.tool, "read_only": connection.read_only,
            "memory_ids": connection.memory_ids, "default_memory": connection.default_memory_id}


@transaction.atomic
def revoke(connection: Connection, *, actor_id: int | None) -> Connection:
    """End a connection and every token it holds (refresh tokens revoked, access tokens
    deleted): its next request is refused."""
    _revoke(connection, actor_id=actor_id, now=timezone.now())
    return connection


def _revoke(connection: Connection, *, actor_id: int | None, now: datetime) -> None:
    if not Connection.objects.filter(pk=connection.pk, revoked_at__isnull=True).update(
            revoked_at=now):
        return
    connection.revoked_at = now
    revoke_tokens(user_id=connection.user_id, application_id=connection.application_id)
    account_event(account_id=connection.account_id, actor_id=actor_id,
                  action="connection.revoked", object_id=connection.pk,
                  after=summary(connection), tool="web")


def revoke_tokens(*, user_id: int, application_id: int) -> None:
    for refresh in get_refresh_token_model().objects.filter(
            user_id=user_id, application_id=application_id, revoked__isnull=True):
        refresh.revoke()
    get_access_token_model().objects.filter(user_id=user_id,
                                            application_id=application_id).delete()


def connections_of(*, account_id: int, user_id: int | None) -> list[Connection]:
    """The live connections of an account: one person's (`user_id`), or everyone's (None,
    for its owners and admins), newest first."""
    found = (Connection.objects.filter(account_id=account_id, revoked_at__isnull=True)
             .select_related("application", "user", "default_memory").order_by("-consented_at"))
    if user_id is not None:
        found = found.filter(user_id=user_id)
    return list(found)


def revocable_connection(*, account_id: int, user_id: int, role: str,
                         connection_id: int) -> Connection:
    """A live connection of the account that this person may revoke: their own, or, for an
    owner or admin, anyone's. Another account's is NotFound, like a missing one."""
    found = (Connection.objects.filter(pk=connection_id, account_id=account_id,
                                       revoked_at__isnull=True)
             .select_related("application", "user", "default_memory").first())
    if found is None or (role == Membership.Role.MEMBER and found.user_id != user_id):
        raise NotFound("there is no such connected app in this account", field="connection",
                       fix="pick an app from the list of connected apps")
    return found


def app_names(*, account_id: int, tools: Iterable[str]) -> dict[str, str]:
    """The app each `oauth:` tool label of the account stands for, by label: its registered
    name, else its client ID (what the audit log shows for a connection's writes). Revoked
    connections count too, since their events remain; a label whose app was deleted is
    named by the client ID the label holds."""
    wanted = {tool for tool in tools if tool.startswith(TOOL_PREFIX)}
    if not wanted:
        return {}
    found = {tool: name or client_id for tool, name, client_id in
             Connection.objects.filter(account_id=account_id, tool__in=wanted)
             .values_list("tool", "application__name", "application__client_id")}
    return {tool: found.get(tool, tool.removeprefix(TOOL_PREFIX)) for tool in wanted}
