"""django-otp-webauthn's ceremony endpoints, under its own namespace (its template tags
reverse "otp_webauthn:..."), answering JSON as its script expects, refusals included."""

from __future__ import annotations

from django.http import JsonResponse
from django.urls import path
from django.views.i18n import JavaScriptCatalog
from django_otp_webauthn import views


class _JsonRefusals:
    """A wrong method is refused in JSON too, like every other refusal here."""

    def http_method_not_allowed(self, request, *args, **kwargs):
        return JsonResponse({"detail": f"use POST, not {request.method}",
                             "code": "method_not_allowed"}, status=405,
                            headers={"Allow": "POST"})


class BeginRegistration(_JsonRefusals, views.BeginCredentialRegistrationView):
    pass


class CompleteRegistration(_JsonRefusals, views.CompleteCredentialRegistrationView):
    pass


class BeginAuthentication(_JsonRefusals, views.BeginCredentialAuthenticationView):
    pass


class CompleteAuthentication(_JsonRefusals, views.CompleteCredentialAuthenticationView):
    pass


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
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["django_otp_webauthn"]),
         name="js-i18n-catalog"),
]
