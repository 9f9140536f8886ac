"""Per-person limits on the pages an attacker would hammer: sign-in (per address and per
email), sign-up, password reset and key creation. Counted by django-ratelimit in the
"ratelimit" cache (settings); a request over a limit gets a 429 page saying when to retry."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_ratelimit.core import get_usage

from echomem.admission import client_address


def client_ip(request: HttpRequest) -> str:
    """The address the API's own limiter sees (honours ECHO_MEMORY_TRUSTED_PROXY_HOPS); an
    IPv6 client counts per /64, since one host commonly holds a whole /64."""
    address = client_address(request.META)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address or "unknown"
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def by_ip(group: str, request: HttpRequest) -> str:
    return client_ip(request)


def by_user(group: str, request: HttpRequest) -> str:
    # Signed-out requests are sent to the sign-in page; they count per address meanwhile.
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"ip:{client_ip(request)}"


def by_posted(field: str) -> Callable[[str, HttpRequest], str]:
    """The email a form names, as sign-in and reset look it up: trimmed, any case."""
    def key(group: str, request: HttpRequest) -> str:
        return request.POST.get(field, "").strip().lower()
    return key


def limited(*limits: tuple[str, Callable[[str, HttpRequest], str]]):
    """Count each POST against every (limit name in WEB_RATE_LIMITS, key function); the first
    limit it exceeds answers 429 instead of the view."""

    def decorate(view):
        @wraps(view)
        def page(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            for name, key in limits:
                usage = get_usage(request, group=f"web.{name}", key=key,
                                  rate=settings.WEB_RATE_LIMITS[name], method="POST",
                                  increment=True)
                if usage and usage["should_limit"]:
                    return too_many(request, usage["time_left"])
            return view(request, *args, **kwargs)
        return page
    return decorate


def too_many(request: HttpRequest, seconds: int) -> HttpResponse:
    seconds = max(int(seconds), 1)
    wait = f"{seconds} seconds" if seconds < 120 else f"{-(-seconds // 60)} minutes"
    response = render(request, "web/too_many.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(seconds)
    return response
