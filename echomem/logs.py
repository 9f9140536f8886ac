"""Logging pieces the settings refer to by name: the request fields every line carries,
and the two formats (ECHO_MEMORY_LOG_FORMAT: `json`, one object per line, or `text`).

What a line may hold: identifiers (request id, account id, key prefix, tool, route) and
messages the code wrote. Request bodies, headers and fact text are never passed to a
logger; as a last guard, anything shaped like an API key is cut to its prefix before a
line is written, whatever put it there (an exception message, a client's path).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

from echomem import log_context

# Keys look like em_<12 hex>_<43 characters> (accounts/keys.py); the prefix alone is an
# identifier the dashboard shows, the rest is the secret.
_KEY = re.compile(r"(em_[0-9a-f]{12})_[A-Za-z0-9_-]{20,}")
# Attributes a record may carry beyond the standard ones that belong in a JSON line: the
# request log's own (echomem/middleware.py), Django's status code and a Celery task's
# (echomem/celery.py, memories/tasks.py). Anything else (Django puts the whole HttpRequest
# on some records) stays out.
EXTRA_FIELDS = ("method", "route", "status", "duration_ms", "door", "status_code",
                "task", "task_id", "facts", "redelivered")


def redact(text: str) -> str:
    return _KEY.sub(r"\1_[redacted]", text)


class ClientErrorWithoutTraceback(logging.Filter):
    """Log a request Django refused as suspicious (`django.security.*`) as one warning line:
    in our logs a traceback means a fault of the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("django.security"):
            return True
        record.exc_info = None
        record.exc_text = None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def route_of(request) -> str | None:
    """The URL pattern a request matched (`/invitations/<str:token>/`), or None."""
    match = getattr(request, "resolver_match", None)
    return "/" + match.route if match is not None else None


class PathsAsRoutes(logging.Filter):
    """Django logs every 4xx and 5xx as "<reason>: <path>"; a path can hold a one-time
    token (an invitation or a password-reset link), so the line names the route pattern
    instead, as the request line does. An unmatched path is kept (nothing of ours is in
    it; a key a client put there is cut by the formatter)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        route = route_of(request) if request is not None else None
        if (record.name == "django.request" and route and isinstance(record.args, tuple)
                and len(record.args) == 2):
            record.args = (record.args[0], route)
        return True


class RequestFields(logging.Filter):
    """Copy the current request's identifiers (echomem/log_context.py) onto the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = log_context.current()
        for name in log_context.FIELDS:
            if not hasattr(record, name):
                setattr(record, name, context.get(name))
        return True


class TextFormatter(logging.Formatter):
    """One readable line (tracebacks below it), with the request id when there is one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(request_tag)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        request_id = getattr(record, "request_id", None)
        record.request_tag = f" [{request_id}]" if request_id else ""
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the request's identifiers
    and, for a fault, the traceback as one string (`exc`)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC)
                            .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for name in (*log_context.FIELDS, *EXTRA_FIELDS):
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["exc"] = redact(self.formatException(record.exc_info))
        elif record.exc_text:
            line["exc"] = redact(record.exc_text)
        if record.stack_info:
            line["stack"] = redact(self.formatStack(record.stack_info))
        return json.dumps(line, ensure_ascii=False, default=str)
