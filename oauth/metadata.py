"""The discovery documents: protected resource metadata for /mcp (RFC 9728) and the
authorization server's metadata (RFC 8414), the latter also at the OpenID discovery path
clients try next. django-oauth-toolkit's views, fed from settings that name the configured
public URL (echomem.oauth_addresses): a Host header changes nothing in them."""

from __future__ import annotations

from oauth2_provider.views import OAuthProtectedResourceMetadataView, OAuthServerMetadataView

from echomem import oauth_addresses
from oauth.tokens import JsonMethods


class ResourceMetadata(JsonMethods, OAuthProtectedResourceMetadataView):
    def get_resource_documentation(self):
        return f"{oauth_addresses.issuer()}/docs/connect/"


class ServerMetadata(JsonMethods, OAuthServerMetadataView):
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Cache-Control"] = "public, max-age=300"
        return response
