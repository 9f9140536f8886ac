"""DRF authentication through the gates both doors share (echomem/admission.py)."""

from __future__ import annotations

from rest_framework import authentication, permissions

from accounts.principal import Principal
from echomem import admission


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """Puts the Principal on `request.auth`; the user slot stays empty (keys are not logins).

    Admission checks the Origin, the key and the key's rate limit (every request of a key
    counts, on /mcp and here); its errors are mapped by api/errors.py.
    """

    def authenticate(self, request) -> tuple[None, Principal]:
        return None, admission.admit(request._request)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="echo-memory"'


class HasPrincipal(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, Principal)
