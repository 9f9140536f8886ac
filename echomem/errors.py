"""The one application-error hierarchy; each edge (CLI, MCP, REST, forms) maps it once."""

from __future__ import annotations


class EchoError(Exception):
    """A failure the caller can fix: it names the field at fault and what to change."""

    code = "invalid_request"

    def __init__(self, message: str, *, field: str | None = None, fix: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.fix = fix

    def as_dict(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.field:
            out["field"] = self.field
        if self.fix:
            out["fix"] = self.fix
        return out


class ConfigurationError(EchoError):
    """The server cannot start as configured; the message is one sentence with the fix."""

    code = "configuration_error"


class AuthenticationFailed(EchoError):
    """No usable credentials; never says which part was wrong beyond what helps the owner."""

    code = "unauthenticated"


class NotFound(EchoError):
    """Missing, or belonging to someone else: the two are deliberately indistinguishable."""

    code = "not_found"


class ValidationFailed(EchoError):
    code = "invalid_argument"


class Forbidden(EchoError):
    """The request may not be made from where it came (a browser origin not allowed)."""

    code = "forbidden"


class RateLimited(EchoError):
    """Too many requests in the rolling window; `retry_after` seconds until one fits."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int, limit: int, window_seconds: int,
                 field: str | None = None, fix: str | None = None):
        super().__init__(message, field=field, fix=fix)
        self.retry_after = retry_after
        self.limit = limit
        self.window_seconds = window_seconds

    def as_dict(self) -> dict[str, object]:
        return {**super().as_dict(), "retry_after": self.retry_after, "limit": self.limit,
                "window_seconds": self.window_seconds}


class AllowanceExhausted(EchoError):
    """The month's units are used up (or this write would pass them): not retryable until
    the month resets or the plan grows, unlike RateLimited."""

    code = "allowance_exhausted"

    def __init__(self, message: str, *, used: int, allowed: int, resets_at: str,
                 upgrade_url: str, field: str | None = None, fix: str | None = None):
        super().__init__(message, field=field, fix=fix)
        self.used = used
        self.allowed = allowed
        self.resets_at = resets_at
        self.upgrade_url = upgrade_url

    def as_dict(self) -> dict[str, object]:
        return {**super().as_dict(), "used": self.used, "allowed": self.allowed,
                "resets_at": self.resets_at, "upgrade_url": self.upgrade_url}


class PayloadTooLarge(EchoError):
    code = "payload_too_large"


class InvalidBody(EchoError):
    """The body is not one JSON value we will read (syntax, encoding, nesting, constants)."""

    code = "invalid_json"


class Timeout(EchoError):
    """The database cancelled the request's statement at the per-request limit."""

    code = "timeout"
