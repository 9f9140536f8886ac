"""Limits on the pages an attacker would hammer: sign-in (the site's and the admin's), sign-up,
password reset, verification mails, invitations and key creation.

Each limit is a rolling window (settings.WEB_RATE_LIMITS) counted by the same limiter as
the API's per-key limit (echomem/ratelimit.py count_named), under a key: the client's address
(echomem/client_address.py, the one the API uses too), the signed-in person, or the
sign-in name of a posted email (accounts/sign_in_names.py: any case or width is one
email). Only POSTs count. A request over a limit gets a 429 page saying when to retry.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.sign_in_names import sign_in_name
from echomem import metrics, ratelimit
from echomem.client_address import client_key

Key = Callable[[HttpRequest], str]


def by_address(request: HttpRequest) -> str:
    return f"address:{client_key(request.META)}"


def by_user(request: HttpRequest) -> str:
    # Signed-out requests are sent to the sign-in page; they count per address meanwhile.
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return by_address(request)


def by_posted(field: str) -> Key:
    """The posted email or user name, as every lookup folds it: one count for any case or
    width of one name."""
    def key(request: HttpRequest) -> str:
        return f"name:{sign_in_name(request.POST.get(field, ''))}"
    key.posted_field = field
    return key


# The site's sign-in page and the admin's count together: one budget per address and per
# name, whichever door is tried.
SIGN_IN = (("login_ip", by_address), ("login_email", by_posted("username")))


def limited(*limits: tuple[str, Key]):
    """Count each POST against every (limit name in WEB_RATE_LIMITS, key); the first limit
    it does not fit answers 429 instead of the view. The view keeps the limits it is under
    in `web_limits` (and their keys in `web_limit_keys`), so a test can find every limited
    page in the URLconf."""

    def decorate(view):
        @wraps(view)
        def page(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST":
                for name, key in limits:
                    decision = ratelimit.count_named(name, key(request))
                    if not decision.allowed:
                        metrics.rate_limit_refused("web")
                        return too_many(request, decision.retry_after)
            return view(request, *args, **kwargs)
        page.web_limits = tuple(name for name, _ in limits)
        page.web_limit_keys = limits
        return page
    return decorate


def too_many(request: HttpRequest, seconds: int) -> HttpResponse:
    seconds = max(int(seconds), 1)
    wait = f"{seconds} seconds" if seconds < 120 else f"{-(-seconds // 60)} minutes"
    response = render(request, "web/too_many.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(seconds)
    return response
