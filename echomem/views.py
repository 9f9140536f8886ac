from __future__ import annotations

import hmac

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from echomem import error_pages, readiness
from echomem import metrics as prometheus_metrics
from mcp_gateway.jsonrpc import INVALID_REQUEST, error_body
from web.connect import connect_context


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: 200 while this process answers HTTP at all. It asks nothing of the database
    or Redis, so an outage there does not get every web process restarted (/readyz)."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when this process can serve (database, Redis where configured,
    migrations, embedding model), else 503 naming each part that failed."""
    checks = readiness.probe(readiness.serving_checks())
    failing = [check.part for check in checks if not check.ok]
    body = {"status": "unavailable" if failing else "ready",
            "checks": {check.part: {"ok": check.ok, "detail": check.detail} for check in checks}}
    if failing:
        body["failing"] = failing
    return JsonResponse(body, status=503 if failing else 200)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus metrics, for a scraper holding ECHO_MEMORY_METRICS_TOKEN; without the
    variable the endpoint does not exist (404)."""
    token = settings.METRICS_TOKEN
    if not token:
        return HttpResponse("Not Found\n", status=404, content_type="text/plain")
    scheme, _, given = (request.headers.get("Authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                             token.encode()):
        response = HttpResponse("send the metrics token: `Authorization: Bearer "
                                "<ECHO_MEMORY_METRICS_TOKEN>`\n", status=401,
                                content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="echo-memory-metrics"'
        return response
    return HttpResponse(prometheus_metrics.scrape(), content_type=prometheus_metrics.CONTENT_TYPE)


@require_GET
def home(request: HttpRequest):
    # Two clients are enough to show the shape; the dashboard has them all.
    return render(request, "home.html", connect_context(request, only=("claude-code", "cursor")))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 for a request it finds suspicious (a Host not in ALLOWED_HOSTS, ...),
    in the shape of the door it was sent to; a browser gets the site's page for it."""
    field = "Host" if isinstance(exception, DisallowedHost) else "request"
    message = (f"the Host header is not one this server answers to; {HOST_FIX}"
               if field == "Host" else f"the request was refused ({exception.__class__.__name__})")
    if request.path.startswith("/mcp"):
        return JsonResponse(error_body(None, INVALID_REQUEST, message, {"field": field}),
                            status=400)
    if request.path.startswith("/api"):
        return JsonResponse({"error": {"code": "invalid_request", "field": field,
                                       "message": message}}, status=400)
    return error_pages.bad_request(request, exception)


HOST_FIX = ("send the server's own name (ALLOWED_HOSTS, e.g. localhost) in Host; an operator "
            "adds names with the ALLOWED_HOSTS variable")
