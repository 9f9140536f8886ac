"""The dashboard's first-run checklist as its polling asks for it (htmx, every few seconds
while a step is open): the same include the dashboard renders, or 204 while nothing has
changed since the page's copy, so the list is not swapped (nor read out again) for nothing."""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django.views.decorators.cache import never_cache
from django_htmx.http import HttpResponseClientRedirect

from memories.catalog.first_run import first_run
from web.access import Member, member

TEMPLATE = "web/_first_run.html"


@never_cache
@member(methods=["GET"])
def _steps(request: HttpRequest, me: Member) -> HttpResponse:
    steps = first_run(me.principal)
    if request.GET.get("seen") == steps.state:
        return HttpResponse(status=204)  # htmx swaps nothing and keeps polling
    return render(request, TEMPLATE, {"first_run": steps})


@never_cache
def first_run_steps(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated and request.htmx:
        # Signed out while the dashboard polled: the whole page goes to sign-in and back,
        # rather than the sign-in form landing inside the checklist.
        dashboard = resolve_url("web:dashboard")
        return HttpResponseClientRedirect(redirect_to_login(dashboard).url)
    return _steps(request)
