"""django-otp-webauthn's ceremony endpoints, under its own namespace (its template tags
reverse "otp_webauthn:..."), answering JSON as its script expects, refusals included."""

from __future__ import annotations

import json

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.i18n import JavaScriptCatalog
from django_otp_webauthn import views
from django_otp_webauthn.templatetags.otp_webauthn import get_configuration


def script_config(request: HttpRequest) -> str:
    """What the package's script reads from #otp_webauthn_config (its URLs, the CSRF
    token), as JSON text for a hidden element (web/_passkey_scripts.html): its own template
    tag writes a <script> data block, which the pages' no-inline-script rule forbids."""
    return json.dumps(get_configuration(request))


class _JsonRefusals:
    """A wrong method is refused in JSON too, like every other refusal here."""

    def http_method_not_allowed(self, request, *args, **kwargs):
        allowed = ", ".join(m.upper() for m in self.http_method_names if hasattr(self, m)
                            and m != "options")
        return JsonResponse({"detail": f"use {allowed}, not {request.method}",
                             "code": "method_not_allowed"}, status=405,
                            headers={"Allow": allowed})


class BeginRegistration(_JsonRefusals, views.BeginCredentialRegistrationView):
    pass


class CompleteRegistration(_JsonRefusals, views.CompleteCredentialRegistrationView):
    pass


class BeginAuthentication(_JsonRefusals, views.BeginCredentialAuthenticationView):
    pass


class CompleteAuthentication(_JsonRefusals, views.CompleteCredentialAuthenticationView):
    pass


class Catalog(_JsonRefusals, JavaScriptCatalog):
    """The script's translated messages (it calls gettext)."""


app_name = "otp_webauthn"
urlpatterns = [
    path("registration/begin/", BeginRegistration.as_view(),
         name="credential-registration-begin"),
    path("registration/complete/", CompleteRegistration.as_view(),
         name="credential-registration-complete"),
    path("authentication/begin/", BeginAuthentication.as_view(),
         name="credential-authentication-begin"),
    path("authentication/complete/", CompleteAuthentication.as_view(),
         name="credential-authentication-complete"),
    path("jsi18n/", Catalog.as_view(packages=["django_otp_webauthn"]),
         name="js-i18n-catalog"),
]
