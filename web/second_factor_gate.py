"""Where a signed-in session that owes something may go (docs/security.md).

After the password, a person with a second factor owes that factor: every page but the
second step, sign-out and the passkey check sends them to the second step, `next` kept. A
member of an account that requires a factor, without one, owes its set-up: every page but
the account security page (and sign-out) sends them there. Keys at /mcp and /api are not
sessions and pass untouched.

What a session owes is worked out at sign-in and kept in the session, looked at again
every few minutes (an owner's new rule reaches members already signed in within that) and
at once after this session changes a factor (`recheck`): the pages themselves pay no
query for it."""

from __future__ import annotations

import time
from urllib.parse import urlencode, urlsplit

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from accounts.second_factors import factor_required, has_factor
from echomem.middleware import door_of

OWED = "echo_memory_second_factor_owed"
RECHECK_SECONDS = 300
VERIFY, SET_UP, NOTHING = "verify", "set-up", ""


def _owed_now(user) -> str:
    if has_factor(user=user):
        return VERIFY
    return SET_UP if factor_required(user=user) else NOTHING


def _keep(request: HttpRequest, owed: str) -> str:
    request.session[OWED] = {"owed": owed, "at": time.time()}
    return owed


def owed(request: HttpRequest) -> str:
    """What this signed-in, not yet verified session owes (VERIFY, SET_UP or NOTHING)."""
    held = request.session.get(OWED)
    if isinstance(held, dict) and time.time() - held.get("at", 0) < RECHECK_SECONDS:
        return held.get("owed", NOTHING)
    return _keep(request, _owed_now(request.user))


def recheck(request: HttpRequest) -> None:
    """After this session added or removed a factor, or changed an account's rule."""
    request.session.pop(OWED, None)


@receiver(user_logged_in)
def _at_sign_in(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        _keep(request, _owed_now(user))


def _allowed(path: str, owes: str) -> bool:
    if door_of(path) != "web" or path in (reverse("web:logout"), "/favicon.ico"):
        return True
    if owes == VERIFY:
        return path in {reverse(name) for name in _SECOND_STEP}
    return path.startswith(reverse("web:account_security"))


# The second step's page and the passkey check its script makes.
_SECOND_STEP = ("web:second_factor", "otp_webauthn:credential-authentication-begin",
                "otp_webauthn:credential-authentication-complete", "otp_webauthn:js-i18n-catalog")


class SecondFactorGate:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if door_of(path) == "web" and request.user.is_authenticated \
                and not request.user.is_verified():
            owes = owed(request)
            if owes and not _allowed(path, owes):
                return self._send_on(request, owes)
        return self.get_response(request)

    @staticmethod
    def _send_on(request: HttpRequest, owes: str) -> HttpResponse:
        where = reverse("web:second_factor" if owes == VERIFY else "web:account_security")
        if request.headers.get("HX-Request") == "true":
            # A loaded page's own request (the dashboard's polling): the whole page goes,
            # and comes back to that page, not to the fragment it asked for.
            page = urlsplit(request.headers.get("HX-Current-URL", ""))
            back = f"{page.path}?{page.query}" if page.query else page.path
            ours = back.startswith("/") and not back.startswith("//")  # a path, not a host
            return HttpResponseClientRedirect(f"{where}?{urlencode({'next': back})}"
                                              if ours else where)
        back = request.get_full_path() if request.method == "GET" else ""
        return redirect(f"{where}?{urlencode({'next': back})}" if back else where)
