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
