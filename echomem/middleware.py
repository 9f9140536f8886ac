"""The request id and the request log: one line and one count per request, at every door.

The id is the caller's `X-Request-ID` when it is a plain token of at most 128
characters (a proxy or a client tying its own logs to ours), otherwise a new one; the
response carries it back, and every log line written while answering names it. The
line gives the route pattern (`api/v1/tools/<name>`), never the path as sent: paths can
hold one-time tokens (password-reset links) and query strings are not ours to log.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from django.http import HttpRequest, HttpResponse

from echomem import log_context, metrics
from echomem.logs import route_of

REQUEST_ID_HEADER = "X-Request-ID"
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
logger = logging.getLogger("echomem.requests")


def request_id_of(request: HttpRequest) -> str:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _VALID_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def door_of(path: str) -> str:
    """Which part of the server a path belongs to: a label with a handful of values."""
    if path == "/mcp" or path.startswith("/mcp/"):
        return "mcp"
    if path.startswith("/api/"):
        return "api"
    if path in ("/healthz", "/readyz", "/metrics"):
        return "ops"
    if path.startswith("/static/"):
        return "static"
    return "web"


class RequestObservability:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_of(request)
        request.request_id = request_id
        token = log_context.begin(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            seconds = time.perf_counter() - started
            response[REQUEST_ID_HEADER] = request_id
            route = route_of(request)
            door = door_of(request.path)
            metrics.observe_request(door, response.status_code, seconds)
            logger.info("%s %s %s %.1fms", request.method, route or "(no route)",
                        response.status_code, seconds * 1000,
                        extra={"method": request.method, "route": route, "door": door,
                               "status": response.status_code,
                               "duration_ms": round(seconds * 1000, 1)})
            return response
        finally:
            log_context.end(token)
