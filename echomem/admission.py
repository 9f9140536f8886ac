"""Who may make a request: the same gates at both doors (/mcp and /api/v1), in one order.

Origin (a browser page that is not ours), then the key, then the rate limit. A request
without a usable key is counted against its client address before it is refused, so a
flood of bad keys is limited without touching any key's budget; a request with a key
counts against that key's window, whatever follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from accounts import keys
from accounts.principal import (
    Principal,
    connection_identity,
    key_identity,
    principal_from_authorization,
)
from echomem import log_context, metrics, ratelimit, ratelimit_headers
from echomem.client_address import client_address, client_key
from echomem.errors import AuthenticationFailed, RateLimited
from echomem.origins import check_origin
from echomem.public_url import request_base

# An account's requests a minute by its plan: billing installs it when it is ready
# (billing/apps.py), as it installs its meter in the engine, so the gates import no billing.
PlanRate = Callable[[int], int]
_plan_rate: PlanRate | None = None


def install_plan_rate(rate: PlanRate) -> None:
    global _plan_rate
    _plan_rate = rate


def admit(request) -> Principal:
    """The caller's Principal, counted once; raises Forbidden, AuthenticationFailed or
    RateLimited (each edge maps them to its own error shape)."""
    check_origin(request.headers.get("Origin"))
    request_base.set(request.build_absolute_uri("/").rstrip("/"))
    address = client_address(request.META)
    header = request.headers.get("Authorization")
    try:
        principal = principal_from_authorization(header, client_address=address,
                                                 door=door_of(request.path))
    except AuthenticationFailed as refused:
        decision = _count_refusal(refused, header, client_key(request.META))
        if not decision.allowed:
            metrics.rate_limit_refused("address")
            raise RateLimited(
                f"too many requests without a valid key from {address}: "
                f"{decision.limit} a minute are answered; wait {decision.retry_after} seconds",
                retry_after=decision.retry_after, limit=decision.limit,
                window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS, field="Authorization",
                fix="send a valid key (`Authorization: Bearer em_...`)") from None
        raise
    log_context.bind(account=principal.account_id,
                     key_prefix=_key_prefix(request.headers.get("Authorization"), principal))
    count(principal, request=request)
    return principal


def door_of(path: str) -> str:
    return "mcp" if path.startswith("/mcp") else "api"


def _count_refusal(refused: AuthenticationFailed, header: str | None, address_key: str):
    """Where a refused request counts. A bad key (or a malformed header) is a guess: its
    address's window. A known credential refused (an OAuth token expired) counts against
    that credential (`identity` on the refusal), so one person's stale token costs no one
    else. No credential at all, or an unknown OAuth token (emat_..., revoked or replaced: 32
    random bytes guess nothing), counts in the address's far larger challenge window: a
    connector relays many people's first requests and stale tokens from a few addresses."""
    identity = getattr(refused, "identity", None)
    if identity:
        return ratelimit.count_refused_credential(identity)
    token = (header or "").strip()
    scheme, _, credential = token.partition(" ")
    credential = credential.strip()
    if not token or (scheme.lower() == "bearer" and keys.looks_like_access_token(credential)):
        return ratelimit.count_challenged(address_key)
    return ratelimit.count_unauthenticated(address_key)


def _key_prefix(header: str | None, principal: Principal) -> str | None:
    """The accepted key's prefix (an identifier the dashboard shows), for the logs."""
    if principal.key_id is None or not header:
        return None
    parsed = keys.parse(header.strip().partition(" ")[2].strip())
    return parsed[0] if parsed else None


def count(principal: Principal, requests: int = 1, *, request=None) -> None:
    """Count `requests` more against the key's window, all or none; RateLimited if they
    do not fit (a JSON-RPC batch counts each of its messages). The window as it now stands
    goes on `request`'s reply, refused or not (echomem/ratelimit_headers.py)."""
    decision = ratelimit.count_request(principal.identity, limit=rate_limit_of(principal),
                                       cost=requests)
    if request is not None:
        ratelimit_headers.remember(request, decision)
    if not decision.allowed:
        metrics.rate_limit_refused("key")
        what = "request" if requests == 1 else f"batch of {requests} more messages"
        raise RateLimited(
            f"rate limit reached: {decision.limit} requests a minute per key, every request "
            f"counted (initialize, notifications and each message of a batch too); this {what} "
            f"fits in {decision.retry_after} seconds", retry_after=decision.retry_after,
            limit=decision.limit, window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS,
            fix=f"wait {decision.retry_after} seconds (the Retry-After header) and send again; "
                "keep one session per worker rather than reconnecting for each call")


def rate_limit_of(principal: Principal) -> int:
    """Requests a minute for this principal: on a self-hosted box the operator may give a
    key its own limit (admin, or `echo-memory manage key_rate_limit`); otherwise, and always
    on the hosted service, the plan's (billing/rates.py: 240 on the default plan)."""
    return _rate_limit(principal.account_id, principal.requests_per_minute)


def _rate_limit(account_id: int, requests_per_minute: int | None) -> int:
    if settings.SELF_HOSTED and requests_per_minute:
        return requests_per_minute
    if _plan_rate is None:
        raise ImproperlyConfigured("no plan rate is installed: add `billing` to INSTALLED_APPS")
    return _plan_rate(account_id)


def key_rates(account_id: int, keys: Iterable) -> dict[int, ratelimit.Usage]:
    """Each key's window as it stands (by key id), read without counting a request: one
    round trip for the page, whatever its length. `keys` are the account's ApiKey rows."""
    keys = list(keys)
    limits = {key_identity(key.pk): _rate_limit(account_id, key.requests_per_minute)
              for key in keys}
    windows = ratelimit.usage(limits, window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS)
    return {key.pk: windows[key_identity(key.pk)] for key in keys}


def connection_rates(account_id: int, connections: Iterable) -> dict[int, ratelimit.Usage]:
    """Each connected app's window as it stands (by connection id), as key_rates reads a
    key's: a connection has the plan's rate (no per-connection limit exists)."""
    connections = list(connections)
    if not connections:
        return {}
    limit = _rate_limit(account_id, None)
    windows = ratelimit.usage({connection_identity(c.pk): limit for c in connections},
                              window_seconds=settings.RATE_LIMIT_WINDOW_SECONDS)
    return {c.pk: windows[connection_identity(c.pk)] for c in connections}
