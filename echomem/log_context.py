"""What every log line written while serving a request says about that request.

The request middleware opens a context with the request id; admission adds the account
and the key's prefix once the key is accepted, and the tool registry adds the tool's
name. The log filter (echomem/logs.py) copies them onto every record, so a line written
deep in the engine still names the request it belongs to. Only identifiers go here:
never a key, a header or anything a caller wrote.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

FIELDS = ("request_id", "account", "key_prefix", "tool")

_current: ContextVar[dict[str, object] | None] = ContextVar("echo_log_context", default=None)


def begin(request_id: str) -> Token:
    """A fresh context for one request; pass the token to `end` when it is answered."""
    return _current.set({"request_id": request_id})


def end(token: Token) -> None:
    _current.reset(token)


def bind(**fields: object) -> None:
    """Add fields to the current request's context (outside a request, nothing happens)."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"not a log context field: {', '.join(sorted(unknown))}")
    context = _current.get()
    if context is not None:
        context.update(fields)


def current() -> dict[str, object]:
    return dict(_current.get() or {})
