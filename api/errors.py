"""Our one error hierarchy, mapped once to REST: {"error": {code, message, field, fix}}."""

from __future__ import annotations

import logging
import secrets

from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler

from echomem.errors import (
    AllowanceExhausted,
    AuthenticationFailed,
    ConfigurationError,
    EchoError,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    Timeout,
)

logger = logging.getLogger(__name__)
STATUS_BY_ERROR = {AllowanceExhausted: 402, AuthenticationFailed: 401, Forbidden: 403,
                   NotFound: 404, PayloadTooLarge: 413, RateLimited: 429, Timeout: 503,
                   ConfigurationError: 500}
CHALLENGE = 'Bearer realm="echo-memory"'


def handle_exception(exc, context):
    response = _error_response(exc, context)
    request = context.get("request")
    if request is not None:
        # Every error under /api is JSON, also from views that answer in another format (the
        # Swagger page's HTML, the schema's OpenAPI YAML) or whose format was not agreed.
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
    return response


def _error_response(exc, context):
    if isinstance(exc, EchoError):
        status = next((code for kind, code in STATUS_BY_ERROR.items() if isinstance(exc, kind)),
                      400)
        response = Response({"error": exc.as_dict()}, status=status)
        if status == 401:
            response["WWW-Authenticate"] = CHALLENGE
        if isinstance(exc, RateLimited | Timeout):
            response["Retry-After"] = str(getattr(exc, "retry_after", 1))
        return response
    if isinstance(exc, exceptions.NotAuthenticated):
        exc = AuthenticationFailed("missing Authorization header", field="Authorization")
        return _error_response(exc, context)
    if isinstance(exc, Http404):
        return _error_response(_not_found(context.get("request")), context)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return Response({"error": {"code": "invalid_request", "field": "Content-Type",
                                   "message": str(exc.detail),
                                   "fix": "send Content-Type: application/json"}}, status=415)
    if isinstance(exc, exceptions.MethodNotAllowed):
        response = exception_handler(exc, context)
        response.data = {"error": {"code": "method_not_allowed", "field": "method",
                                   "message": str(exc.detail),
                                   "fix": "see /api/v1/docs for each endpoint's method"}}
        return response
    if isinstance(exc, exceptions.APIException):
        response = exception_handler(exc, context)
        response.data = {"error": {"code": exc.default_code, "message": str(exc.detail)}}
        return response
    reference = secrets.token_hex(6)
    logger.exception("REST %s failed (reference %s)", context["request"].path, reference)
    return Response({"error": internal_error(reference)}, status=500)


def _not_found(request) -> EchoError:
    """DRF raises Django's Http404 when `?format=` names no format the view renders."""
    given = request.query_params.get("format") if request is not None else None
    if given is not None:
        return EchoError(f"format={given[:40]!r} is not a format this endpoint answers in",
                         field="format", fix="leave out the format parameter: the API answers "
                                             "in JSON")
    return NotFound("not found", field="path",
                    fix="see /api/v1/docs (or the schema at /api/v1/schema) for the endpoints")


def internal_error(reference: str) -> dict[str, str]:
    # No "try again": resending does not fix a fault in the server.
    return {"code": "internal_error", "reference": reference,
            "message": f"internal error: the server failed while answering this request "
                       f"(reference {reference}, logged for its operator); this is a fault in "
                       "the server, not in the request or its arguments"}


@csrf_exempt
def not_found(request, *args, **kwargs) -> JsonResponse:
    """Unknown paths under /api/v1 answer in the API's shape, not with an HTML page."""
    return JsonResponse({"error": {
        "code": "not_found", "field": "path",
        "message": f"{request.path} is not an endpoint of this API",
        "fix": "see /api/v1/docs (or the schema at /api/v1/schema) for the endpoints"}},
        status=404)
