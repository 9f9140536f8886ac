"""The account security page: the person's second factors (authenticator app, passkeys,
recovery codes) and, for owners, the account's rule that every member has one. The rules
are in accounts.second_factors and accounts.second_factor_policy."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from django_otp import login as otp_login

from accounts import second_factors
from accounts.second_factors import APP
from accounts.where_from import network_of
from echomem.errors import NotFound, ValidationFailed
from web import shown_once
from web.access import acting
from web.passkey_urls import script_config
from web.refusals import add_refusal, refusal_text
from web.second_factor import next_of
from web.second_factor_forms import CodeForm, PasskeyNameForm, RequirementForm
from web.second_factor_gate import SET_UP, owed, recheck

CODES = "recovery_codes"
APP_CODE_HELP = "The 6 digits the app shows now for Echo Memory."


def _team_rule(request: HttpRequest) -> dict | None:
    """The account's rule as the page shows it; None where the person is in no account."""
    try:
        me = acting(request)
    except NotFound:
        return None
    return {"account": me.account, "is_owner": me.is_owner,
            "required": me.account.require_second_factor}


def security_context(request: HttpRequest, **more) -> dict:
    context = {"factors": second_factors.factors_of(user=request.user),
               "team_rule": _team_rule(request),
               "must_set_up": not request.user.is_verified() and owed(request) == SET_UP,
               "name_form": PasskeyNameForm(), "requirement_form": RequirementForm(),
               "next": next_of(request), "passkey_config": script_config(request)}
    return {**context, **more}


@never_cache
@login_required
@require_http_methods(["GET"])
def security_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/account_security.html", security_context(request))


def _after_change(request: HttpRequest, text: str) -> HttpResponse:
    recheck(request)
    messages.success(request, text)
    return redirect("web:account_security")


@never_cache  # it shows the secret
@login_required
@require_http_methods(["GET", "POST"])
def totp_setup(request: HttpRequest) -> HttpResponse:
    try:
        setup = second_factors.totp_begin(user=request.user)
    except ValidationFailed as refused:
        messages.error(request, refusal_text(refused))
        return redirect("web:account_security")
    form = CodeForm(request.POST or None, help_text=APP_CODE_HELP)
    if request.method == "POST" and form.is_valid():
        try:
            app, codes = second_factors.totp_confirm(
                user=request.user, code=form.cleaned_data["code"],
                network=network_of(request.META))
        except ValidationFailed as refused:
            add_refusal(form, refused, "code")
        else:
            # The code just typed is a second factor passed: this session goes on.
            if not request.user.is_verified():
                otp_login(request, app)
            if codes:
                shown_once.keep(request, CODES, 0, " ".join(codes))
                recheck(request)
                messages.success(request, "The authenticator app is on. Keep these "
                                          "recovery codes somewhere safe now.")
                return redirect("web:recovery_codes")
            return _after_change(request, "The authenticator app is on.")
    return render(request, "web/totp_setup.html", {"setup": setup, "form": form})


@require_POST
@login_required
def totp_remove(request: HttpRequest) -> HttpResponse:
    try:
        second_factors.remove_factor(user=request.user, kind=APP,
                                     keep_session_key=request.session.session_key,
                                     network=network_of(request.META))
    except (ValidationFailed, NotFound) as refused:
        messages.error(request, refusal_text(refused))
        return redirect("web:account_security")
    return _after_change(request, "The authenticator app is removed.")


@never_cache  # it shows the codes, once
@login_required
@require_http_methods(["GET", "POST"])
def recovery_codes(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            codes = second_factors.recovery_codes_regenerate(user=request.user)
        except ValidationFailed as refused:
            messages.error(request, refusal_text(refused))
            return redirect("web:account_security")
        shown_once.keep(request, CODES, 0, " ".join(codes))
        messages.success(request, "New recovery codes: the old ones no longer work.")
        return redirect("web:recovery_codes")
    held = shown_once.take(request, CODES)
    if held is None:
        messages.info(request, "Recovery codes are shown once, when they are made. Make new "
                               "ones if you have lost them.")
        return redirect("web:account_security")
    return render(request, "web/recovery_codes.html", {"codes": held[1].split()})
