"""Dynamic client registration (RFC 7591): open to any client (public ones register
themselves before anyone signs in), limited per address, with callbacks checked
(oauth/redirects.py) before django-oauth-toolkit stores the client. A client may register
as often as it likes; registrations never used for a consent are deleted after a day
(accounts/stale_registrations.py)."""

from __future__ import annotations

import json

from django.conf import settings
from django.http import JsonResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.views import DynamicClientRegistrationView

from echomem import ratelimit
from echomem.client_address import client_key
from oauth.redirects import redirect_uri_problem
from oauth.tokens import JsonMethods

MAX_BODY = 16 * 1024
TEXT_FIELDS = {"client_name": 200, "client_uri": 2000, "logo_uri": 2000, "scope": 200}


def _refused(description: str, status: int = 400, error: str = "invalid_client_metadata",
             headers: dict | None = None) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


@method_decorator(csrf_exempt, name="dispatch")
class Registration(JsonMethods, DynamicClientRegistrationView):
    def post(self, request, *args, **kwargs):
        decision = ratelimit.hit(f"register:{client_key(request.META)}",
                                 limit=settings.OAUTH_REGISTRATIONS_PER_HOUR,
                                 window_seconds=3600)
        if not decision.allowed:
            return _refused(f"too many registrations from this address: "
                            f"{decision.limit} an hour; wait {decision.retry_after} seconds",
                            status=429, error="rate_limited",
                            headers={"Retry-After": str(decision.retry_after)})
        if len(request.body) > MAX_BODY:
            return _refused(f"the registration is over {MAX_BODY} bytes")
        try:
            metadata = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            return _refused("send the client's metadata as a JSON object (RFC 7591 2)")
        if not isinstance(metadata, dict):
            return _refused("send the client's metadata as a JSON object (RFC 7591 2)")
        # A null is a field left out (SDKs serialize unset fields so); django-oauth-toolkit
        # would store a null client_name and fail on the column. It reads the body itself,
        # so the body it reads is the metadata without them.
        metadata = {field: value for field, value in metadata.items() if value is not None}
        request._body = json.dumps(metadata).encode()
        problem = redirect_uri_problem(metadata.get("redirect_uris"))
        if problem:
            return _refused(problem, error="invalid_redirect_uri")
        for field, longest in TEXT_FIELDS.items():
            value = metadata.get(field, "")
            if not isinstance(value, str) or len(value) > longest or "\x00" in value:
                return _refused(f"{field} must be a string of at most {longest} characters "
                                "without NUL")
        return super().post(request, *args, **kwargs)
