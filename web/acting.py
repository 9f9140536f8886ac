"""The account a signed-in person is acting in: the one they picked this session, else
the first they joined. Every page resolves its principal and role here."""

from __future__ import annotations

from django.http import HttpRequest

from accounts.principal import Principal, principal_for_member
from echomem.errors import NotFound

CURRENT_ACCOUNT = "echo_memory_account_id"


def acting(request: HttpRequest) -> tuple[Principal, str]:
    """(principal, role) in the session's account; a membership that has ended since falls
    back to the person's first account, and no membership at all is NotFound."""
    chosen = request.session.get(CURRENT_ACCOUNT)
    if chosen is not None:
        try:
            return principal_for_member(request.user, chosen)
        except NotFound:
            request.session.pop(CURRENT_ACCOUNT, None)
    return principal_for_member(request.user)
