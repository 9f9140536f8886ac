"""The second step of signing in: a code from the app, a recovery code, or a passkey."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login

from accounts.second_factors import factors_of, verify_code
from echomem.errors import ValidationFailed
from web.passkey_urls import script_config
from web.refusals import add_refusal
from web.second_factor_forms import CodeForm
from web.second_factor_gate import recheck

CODE_HELP = ("The 6 digits your authenticator app shows now, or one of your recovery codes "
             "(each works once).")


def next_of(request: HttpRequest) -> str:
    """Where to go once signed in: the `next` both steps carry, if it is on this site."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure())
    if not safe or not wanted.startswith("/") or wanted.startswith(reverse("web:second_factor")) \
            or any(ord(ch) < 32 for ch in wanted):
        return resolve_url(settings.LOGIN_REDIRECT_URL)
    return wanted


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def second_factor(request: HttpRequest) -> HttpResponse:
    factors = factors_of(user=request.user)
    if request.user.is_verified() or not factors.any:
        return HttpResponseRedirect(next_of(request))
    form = CodeForm(request.POST or None, help_text=CODE_HELP)
    if request.method == "POST" and form.is_valid():
        try:
            device = verify_code(user=request.user, code=form.cleaned_data["code"])
        except ValidationFailed as refused:
            add_refusal(form, refused, "code")
        else:
            otp_login(request, device)
            recheck(request)
            return HttpResponseRedirect(next_of(request))
    return render(request, "web/second_factor.html", {
        "form": form, "next": next_of(request), "factors": factors,
        "passkey_config": script_config(request)})
