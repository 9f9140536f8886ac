"""The token, revocation and registration-management endpoints: django-oauth-toolkit's
views, with the answers the RFCs fix that it leaves loose. Every error body is JSON and says
so (RFC 6749 5.2: some of its own errors, invalid_target among them, go out as text/html,
and a wrong method is an empty page); a Basic header that is not ASCII is invalid_client
rather than a failure decoding it; and the device grant, which this server does not offer,
is unsupported_grant_type rather than a lookup of a device_code the request may not carry."""

from __future__ import annotations

from django.http import JsonResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as dot

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def refused(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


def _json_typed(response):
    if response.status_code != 200 and response.content.startswith(b"{"):
        response["Content-Type"] = "application/json"
    return response


def _unreadable_authorization(request) -> JsonResponse | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header.isascii():
        return None
    return refused("invalid_client", "the Authorization header must be ASCII: Basic "
                   "base64(client_id:client_secret), or send client_id in the form", 401)


class JsonMethods:
    """A method the endpoint does not serve is a JSON 405 naming the ones it does."""

    def http_method_not_allowed(self, request, *args, **kwargs):
        allowed = ", ".join(self._allowed_methods())
        response = refused("invalid_request", f"{request.method} is not served here; use "
                           f"{allowed}", 405)
        response["Allow"] = allowed
        return response


@method_decorator(csrf_exempt, name="dispatch")
class Token(JsonMethods, dot.TokenView):
    def post(self, request, *args, **kwargs):
        if request.POST.get("grant_type") == DEVICE_GRANT:
            return refused("unsupported_grant_type",
                           "grant_type must be authorization_code or refresh_token")
        return _unreadable_authorization(request) or _json_typed(
            super().post(request, *args, **kwargs))


@method_decorator(csrf_exempt, name="dispatch")
class Revoke(JsonMethods, dot.RevokeTokenView):
    def post(self, request, *args, **kwargs):
        return _unreadable_authorization(request) or _json_typed(
            super().post(request, *args, **kwargs))


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationManagement(JsonMethods, dot.DynamicClientRegistrationManagementView):
    pass
