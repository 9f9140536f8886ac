"""Our one error hierarchy, mapped once to REST responses."""

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
    return exception_handler(exc, context)
