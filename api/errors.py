"""Our one error hierarchy, mapped once to REST: {"error": {code, message, field, fix}}."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from echomem.errors import AuthenticationFailed, EchoError, NotFound

STATUS_BY_ERROR = {AuthenticationFailed: 401, NotFound: 404}
CHALLENGE = 'Bearer realm="echo-memory"'


def handle_exception(exc, context):
    if isinstance(exc, EchoError):
        status = next((code for kind, code in STATUS_BY_ERROR.items() if isinstance(exc, kind)),
                      400)
        response = Response({"error": exc.as_dict()}, status=status)
        if status == 401:
            response["WWW-Authenticate"] = CHALLENGE
        return response
    if isinstance(exc, exceptions.NotAuthenticated):
        exc = AuthenticationFailed("missing Authorization header", field="Authorization")
        return handle_exception(exc, context)
    if isinstance(exc, exceptions.Throttled):
        wait = int(exc.wait or 1)
        response = Response({"error": {
            "code": "rate_limited", "retry_after": wait,
            "message": f"rate limit reached: every request of a key counts, on /mcp and here; "
                       f"wait {wait} seconds (the Retry-After header) and send again"}},
            status=429)
        response["Retry-After"] = str(wait)
        return response
    if isinstance(exc, exceptions.ParseError):
        return Response({"error": {"code": "invalid_request", "field": "body",
                                   "message": f"the body is not valid JSON: {exc.detail}",
                                   "fix": "send one JSON object with Content-Type: "
                                          "application/json"}}, status=400)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return Response({"error": {"code": "invalid_request", "field": "Content-Type",
                                   "message": str(exc.detail),
                                   "fix": "send Content-Type: application/json"}}, status=415)
    if isinstance(exc, exceptions.MethodNotAllowed):
        response = exception_handler(exc, context)
        response.data = {"error": {"code": "method_not_allowed", "message": str(exc.detail)}}
        return response
    return exception_handler(exc, context)
