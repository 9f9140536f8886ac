"""Who is asking: resolved from a Bearer key (or another app's credential, through a
registered resolver), or on a self-hosted box from the environment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone

from accounts import key_cache, keys, limits
from accounts.models import ApiKey, Membership
from accounts.sign_in_names import user_for_sign_in
from echomem.client_address import is_loopback, network_of
from echomem.errors import AuthenticationFailed, ConfigurationError, NotFound

# Writing last_used_at on every request would turn each read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)
BEARER_FIX = "send the header `Authorization: Bearer em_...` with a key from your dashboard"


@dataclass(frozen=True)
class Principal:
    """Who acts. `holder_id` is None only for the server's own maintenance (repairs)."""

    account_id: int
    holder_id: int | None
    tool: str
    key_id: int | None = None
    default_memory_id: int | None = None
    # The key's own requests a minute, set by a self-hosted box's operator; None: the plan's.
    requests_per_minute: int | None = None
    # Limits (accounts/limits.py), a key's or a grant's: no tool that writes, erases or
    # records; only these memories (None: every memory of the account; else the default
    # memory is among them); refused from this moment on.
    read_only: bool = False
    memory_ids: frozenset[int] | None = None
    expires_at: datetime | None = None
    # An OAuth grant's (accounts/connections.py): the connection, and the token's scopes
    # (memory:read, memory:write). None for keys and people.
    connection_id: int | None = None
    scopes: frozenset[str] | None = None

    @property
    def solo_prefix(self) -> str:
        """What every solo partition of this holder starts with, whatever the tool."""
        return f"solo:{self.holder_id}:"

    @property
    def solo_partition(self) -> str:
        """The partition label of this holder's tool; `shared` is the account-wide one."""
        return f"{self.solo_prefix}{self.tool}"

    @property
    def is_agent_credential(self) -> bool:
        """A key or a grant: what an agent holds (people in the dashboard and the keyless
        box hold neither)."""
        return self.key_id is not None or self.connection_id is not None

    @property
    def identity(self) -> str:
        """Who owns sessions and a rate-limit window: the key, or the keyless box user."""
        if self.key_id is not None:
            return key_identity(self.key_id)
        if self.connection_id is not None:
            return connection_identity(self.connection_id)
        return f"self-hosted:{self.holder_id}:{self.tool}"


def key_identity(key_id: int) -> str:
    """A key's sessions and rate-limit window are under this name (the keys page reads it)."""
    return f"key:{key_id}"


def connection_identity(connection_id: int) -> str:
    """A connected app's window (the connected apps page reads it), as key_identity."""
    return f"connection:{connection_id}"


def principal_from_authorization(header: str | None, *, client_address: str | None = None,
                                 door: str = "mcp") -> Principal:
    """Resolve an `Authorization` header value; every refusal says what to send instead.

    Without a header, a self-hosted box with ECHO_MEMORY_USER_ID acts as that user, but
    only for a client on this machine (`client_address` loopback) unless
    ECHO_MEMORY_ALLOW_KEYLESS_REMOTE says otherwise.
    """
    if not header or not header.strip():
        if settings.SELF_HOSTED and settings.SELF_HOSTED_USER_ID:
            if keyless_allowed_from(client_address):
                return self_hosted_principal()
            raise AuthenticationFailed(
                "missing Authorization header: requests without a key are accepted only from "
                "this machine", field="Authorization",
                fix=f"{BEARER_FIX}, or set ECHO_MEMORY_ALLOW_KEYLESS_REMOTE=1 on the server if "
                    "every client that can reach it may act as ECHO_MEMORY_USER_ID")
        raise AuthenticationFailed("missing Authorization header", field="Authorization",
                                   fix=BEARER_FIX)
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationFailed(
            "the Authorization header must use the Bearer scheme", field="Authorization",
            fix=BEARER_FIX,
        )
    token = token.strip()
    for resolver in _RESOLVERS:
        if resolver.claims(token):
            if door not in resolver.doors:
                raise AuthenticationFailed(
                    f"{resolver.name} are accepted only at {' and '.join(sorted(resolver.doors))}"
                    f", not at {door}", field="Authorization", fix=BEARER_FIX)
            return resolver.resolve(token)
    return principal_from_key(token, client_address=client_address)


@dataclass(frozen=True)
class BearerResolver:
    """A kind of credential another app understands (OAuth access tokens, say): `claims`
    says whether a Bearer token is of its kind, `resolve` turns it into a Principal or
    raises AuthenticationFailed. accounts resolves its own API keys and knows no other
    kind: apps above it plug theirs in (AppConfig.ready), so accounts imports none of them."""

    name: str
    claims: Callable[[str], bool]
    resolve: Callable[[str], Principal]
    # The doors (mcp, api) that take this kind: an OAuth token is bound to /mcp alone.
    doors: frozenset[str] = frozenset({"mcp", "api"})


_RESOLVERS: list[BearerResolver] = []


def register_bearer_resolver(resolver: BearerResolver) -> None:
    """Tried before the API-key check, in the order registered; registering a name again
    replaces the earlier one (a reloaded app does not resolve twice)."""
    _RESOLVERS[:] = [known for known in _RESOLVERS if known.name != resolver.name]
    _RESOLVERS.append(resolver)


def unregister_bearer_resolver(name: str) -> None:
    _RESOLVERS[:] = [known for known in _RESOLVERS if known.name != name]


def principal_from_key(plaintext: str, *, client_address: str | None = None,
                       now: datetime | None = None) -> Principal:
    """The key's Principal, with its limits; refused when the key is unknown, revoked,
    expired, or an old secret past its rotation's grace. `now` is for tests at a boundary."""
    parsed = keys.parse(plaintext)
    if parsed is None:
        raise AuthenticationFailed(
            "the API key is malformed; keys look like em_<12 hex>_<43 characters>",
            field="Authorization", fix="copy the whole key, as shown when it was created",
        )
    prefix, secret = parsed
    now = now or timezone.now()
    key = key_cache.get(prefix) or _read_key(prefix)
    if key is None or not _secret_accepted(key, secret, now):
        raise AuthenticationFailed(
            "the API key is not valid", field="Authorization",
            fix="create a new key in your dashboard; keys are shown only once",
        )
    if key.revoked:
        raise AuthenticationFailed(
            "the API key was revoked", field="Authorization",
            fix="use an active key, or create a new one in your dashboard",
        )
    limits.refuse_if_expired(key.expires_at, now)
    _touch(prefix, key, now, network_of(client_address))
    return Principal(account_id=key.account_id, holder_id=key.holder_id, tool=key.tool,
                     key_id=key.id, default_memory_id=key.default_memory_id,
                     requests_per_minute=key.requests_per_minute, read_only=key.read_only,
                     memory_ids=key.memory_ids, expires_at=key.expires_at)


def _secret_accepted(key: key_cache.KeyRow, secret: str, now: datetime) -> bool:
    """The current secret; or, inside a rotation's grace, the one it replaced. An old
    secret past its grace is refused saying so (it is not merely unknown)."""
    if keys.secret_matches(secret, key.secret_hash):
        return True
    if not key.previous_secret_hash or not keys.secret_matches(secret,
                                                               key.previous_secret_hash):
        return False
    if key.previous_secret_until is not None and now < key.previous_secret_until:
        return True
    raise AuthenticationFailed(
        "this key was rotated: its old secret stopped working at "
        f"{key.previous_secret_until.astimezone(UTC):%Y-%m-%d %H:%M} UTC", field="Authorization",
        fix="use the new secret shown when the key was rotated, or rotate it again in the "
            "dashboard")


# The columns KeyRow declares, read as stored: `revoked` is the row's revoked_at set.
_KEY_COLUMNS = tuple("revoked_at" if field.name == "revoked" else field.name
                     for field in fields(key_cache.KeyRow))


def _read_key(prefix: str) -> key_cache.KeyRow | None:
    """The key's row from the database, kept a moment for the next request."""
    found = ApiKey.objects.filter(prefix=prefix).values(*_KEY_COLUMNS).first()
    if found is None:
        return None
    memory_ids = found.pop("memory_ids")
    row = key_cache.KeyRow(
        **{name: value for name, value in found.items() if name != "revoked_at"},
        revoked=found["revoked_at"] is not None,
        memory_ids=None if memory_ids is None else frozenset(memory_ids))
    key_cache.put(prefix, row)
    return row


def _touch(prefix: str, key: key_cache.KeyRow, now: datetime, network: str) -> None:
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.id).update(last_used_at=now, last_used_network=network)
        key_cache.touched(prefix, now)


def keyless_allowed_from(client_address: str | None) -> bool:
    return settings.SELF_HOSTED_KEYLESS_REMOTE or is_loopback(client_address)


def self_hosted_principal() -> Principal:
    """ECHO_MEMORY_USER_ID names a user; their owned (or first) account is the tenant."""
    user_id = settings.SELF_HOSTED_USER_ID
    user = user_for_sign_in(user_id)  # in any case or width, as sign-in finds it
    if user is None:
        raise ConfigurationError(
            f"ECHO_MEMORY_USER_ID={user_id} names no user; run `echo-memory quickstart` "
            "or `echo-memory createsuperuser`, or unset ECHO_MEMORY_USER_ID to require API keys.",
            field="ECHO_MEMORY_USER_ID",
        )
    memberships = Membership.objects.filter(user=user).order_by("created_at")
    membership = (
        memberships.filter(role=Membership.Role.OWNER).first() or memberships.first()
    )
    if membership is None:
        raise ConfigurationError(
            f"ECHO_MEMORY_USER_ID={user_id} belongs to no account; run `echo-memory quickstart`.",
            field="ECHO_MEMORY_USER_ID",
        )
    return Principal(account_id=membership.account_id, holder_id=user.pk,
                     tool=settings.SELF_HOSTED_AGENT_ID or "agent")


WEB_TOOL = "web"


def principal_for_member(user, account_id: int | None = None) -> tuple[Principal, str]:
    """A signed-in person acting in one of their accounts (the first they joined if none
    is named), with their role there. Not a member: NotFound, as for a missing account."""
    memberships = Membership.objects.filter(user=user).order_by("pk")
    if account_id is not None:
        memberships = memberships.filter(account_id=account_id)
    found = memberships.values_list("account_id", "role").first()
    if found is None:
        raise NotFound("you are not a member of that account", field="account",
                       fix="pick one of your accounts, or ask its owner for an invitation")
    return Principal(account_id=found[0], holder_id=user.pk, tool=WEB_TOOL), found[1]
