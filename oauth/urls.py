"""The authorization server's routes. Named as django-oauth-toolkit names them (its
metadata view reverses `oauth2_provider:authorize` and the others), under /oauth/, and the
discovery documents at the well-known paths RFC 8414, RFC 9728 and OpenID discovery give."""

from django.urls import path

from oauth.consent import Consent
from oauth.metadata import ResourceMetadata, ServerMetadata
from oauth.registration import Registration
from oauth.tokens import RegistrationManagement, Revoke, Token

app_name = "oauth2_provider"

urlpatterns = [
    path(".well-known/oauth-protected-resource", ResourceMetadata.as_view(),
         name="oauth-resource-metadata"),
    # RFC 9728 3.1: the resource's path after the well-known part (the resource is /mcp).
    path(".well-known/oauth-protected-resource/mcp", ResourceMetadata.as_view(),
         name="oauth-resource-metadata-mcp"),
    path(".well-known/oauth-authorization-server", ServerMetadata.as_view(),
         name="oauth-server-metadata"),
    path(".well-known/openid-configuration", ServerMetadata.as_view(),
         name="openid-configuration"),
    path("oauth/authorize", Consent.as_view(), name="authorize"),
    path("oauth/token", Token.as_view(), name="token"),
    path("oauth/revoke", Revoke.as_view(), name="revoke-token"),
    path("oauth/register", Registration.as_view(), name="dcr-register"),
    path("oauth/register/<str:client_id>", RegistrationManagement.as_view(),
         name="dcr-register-management"),
]
