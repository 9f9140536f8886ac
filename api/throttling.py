"""The REST API shares the MCP endpoint's rolling window: one budget per key, both doors."""

from __future__ import annotations

from rest_framework.throttling import BaseThrottle

from accounts.principal import Principal
from mcp_gateway import ratelimit
from mcp_gateway.sessions import owner_of


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view) -> bool:
        principal = request.auth
        if not isinstance(principal, Principal):
            return True  # public pages (schema, docs); authenticated views refuse earlier
        self.decision = ratelimit.count_request(owner_of(principal))
        return self.decision.allowed

    def wait(self) -> float:
        return float(self.decision.retry_after)
