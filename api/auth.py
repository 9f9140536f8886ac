"""DRF authentication by Bearer API key."""

from __future__ import annotations

from rest_framework import authentication, permissions

from accounts.principal import Principal, principal_from_authorization


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """Puts the Principal on `request.auth`; the user slot stays empty (keys are not logins)."""

    def authenticate(self, request) -> tuple[None, Principal]:
        header = request.META.get("HTTP_AUTHORIZATION")
        return None, principal_from_authorization(header)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="echo-memory"'


class HasPrincipal(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, Principal)
