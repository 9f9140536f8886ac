"""Who a page acts as. `member` gives a view the signed-in person's current account (the
one they picked this session, else the first they joined), their role there and their
Principal, resolved once; every account page is built on it."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods

from accounts.principal import Principal, principal_for_member
from accounts.selectors import account_of
from accounts.team import Role
from echomem.errors import Forbidden, NotFound

CURRENT_ACCOUNT = "echo_memory_account_id"


@dataclass(frozen=True)
class Member:
    """The person acting in one account: their Principal and role there."""

    principal: Principal
    role: str

    @cached_property
    def account(self):
        # Read on first use: most pages never show the account itself.
        return account_of(self.principal)

    @property
    def is_owner(self) -> bool:
        return self.role == Role.OWNER


def acting(request: HttpRequest) -> Member:
    """The session's account; a membership that has ended since falls back to the person's
    first account, and no membership at all is NotFound."""
    chosen = request.session.get(CURRENT_ACCOUNT)
    if chosen is not None:
        try:
            return Member(*principal_for_member(request.user, chosen))
        except NotFound:
            request.session.pop(CURRENT_ACCOUNT, None)
    return Member(*principal_for_member(request.user))


Outsider = Callable[[HttpRequest], HttpResponse]


def member(view: Callable[..., HttpResponse] | None = None, *,
           methods: Collection[str] | None = None, roles: Collection[str] | None = None,
           refusal: Callable[[], Forbidden] | None = None,
           outsider: Outsider | None = None) -> Any:
    """A signed-in page acting in the person's account, called as view(request, member,
    ...). In order: sign-in (else the sign-in page), the HTTP method (`methods`, else 405),
    membership (else 404, or `outsider`'s page), the role (`roles`, else `refusal`'s 403).
    Refusals the services raise become Django's own 404 and 403 pages (another account's
    object looks like a missing one)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        def resolved(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                me = acting(request)
            except NotFound:
                if outsider is None:
                    raise
                return outsider(request)
            if roles is not None and me.role not in roles:
                raise refusal()
            return view(request, me, *args, **kwargs)

        checked = require_http_methods(list(methods))(resolved) if methods else resolved

        @login_required
        @wraps(view)
        def page(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return checked(request, *args, **kwargs)
            except NotFound as missing:
                raise Http404(missing.message) from None
            except Forbidden as refused:
                raise PermissionDenied(refused.message) from None

        return page

    if roles is not None and refusal is None:
        raise TypeError("a role check needs the refusal its page shows")
    return decorate(view) if view is not None else decorate
