from __future__ import annotations

from django.core.exceptions import DisallowedHost
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.http import require_GET

from mcp_gateway.jsonrpc import INVALID_REQUEST, error_body
from web.connect import connect_context


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and `echo-memory status`: 200 only if the database answers."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any database failure means "not ready"
        return JsonResponse({"status": "unavailable", "database": str(exc)[:200]}, status=503)
    return JsonResponse({"status": "ok"})


@require_GET
def home(request: HttpRequest):
    # Two clients are enough to show the shape; the dashboard has them all.
    return render(request, "home.html", connect_context(request, only=("claude-code", "cursor")))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 for a request it finds suspicious (a Host not in ALLOWED_HOSTS, ...),
    in the shape of the door it was sent to; the web pages keep Django's page."""
    field = "Host" if isinstance(exception, DisallowedHost) else "request"
    message = (f"the Host header is not one this server answers to; {HOST_FIX}"
               if field == "Host" else f"the request was refused ({exception.__class__.__name__})")
    if request.path.startswith("/mcp"):
        return JsonResponse(error_body(None, INVALID_REQUEST, message, {"field": field}),
                            status=400)
    if request.path.startswith("/api"):
        return JsonResponse({"error": {"code": "invalid_request", "field": field,
                                       "message": message}}, status=400)
    return defaults.bad_request(request, exception)


HOST_FIX = ("send the server's own name (ALLOWED_HOSTS, e.g. localhost) in Host; an operator "
            "adds names with the ALLOWED_HOSTS variable")
