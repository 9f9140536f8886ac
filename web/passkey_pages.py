"""Naming and removing passkeys, and the account's rule, posted from the account security
page; a refusal shows there next to the field it names. Adding a passkey is the browser's
ceremony (web/passkey_urls.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts import second_factor_policy, second_factors
from accounts.second_factors import PASSKEY
from accounts.team import Role
from accounts.where_from import network_of
from echomem.errors import Forbidden, NotFound, ValidationFailed
from web import shown_once
from web.access import Member, member
from web.account_security import CODES, security_context
from web.refusals import add_refusal
from web.second_factor_forms import PasskeyForm, PasskeyNameForm, RequirementForm
from web.second_factor_gate import recheck


def _refused_here(request: HttpRequest, **forms) -> HttpResponse:
    return render(request, "web/account_security.html", security_context(request, **forms),
                  status=400)


@require_POST
@login_required
def passkey_name(request: HttpRequest) -> HttpResponse:
    form = PasskeyNameForm(request.POST)
    if not form.is_valid():
        return _refused_here(request, name_form=form)
    try:
        passkey = second_factors.rename_passkey(user=request.user,
                                                passkey_id=form.cleaned_data["passkey"],
                                                name=form.cleaned_data["name"] or None)
    except NotFound as missing:
        raise Http404(missing.message) from None
    except ValidationFailed as refused:
        add_refusal(form, refused, "name")
        return _refused_here(request, name_form=form)
    recheck(request)
    messages.success(request, f"The passkey is called {passkey.name}.")
    if second_factors.recovery_codes_missing(user=request.user):
        # The first factor is a passkey (its ceremony answers its script, not a page):
        # the recovery codes that come with a first factor are shown here, once.
        codes = second_factors.recovery_codes_regenerate(user=request.user)
        shown_once.keep(request, CODES, 0, " ".join(codes))
        return redirect("web:recovery_codes")
    return redirect("web:account_security")


@require_POST
@login_required
def passkey_remove(request: HttpRequest) -> HttpResponse:
    form = PasskeyForm(request.POST)
    if not form.is_valid():
        return _refused_here(request, remove_form=form)
    try:
        second_factors.remove_factor(user=request.user, kind=PASSKEY,
                                     factor_id=form.cleaned_data["passkey"],
                                     keep_session_key=request.session.session_key,
                                     network=network_of(request.META))
    except NotFound as missing:
        raise Http404(missing.message) from None
    except ValidationFailed as refused:
        add_refusal(form, refused, None)
        return _refused_here(request, remove_form=form)
    recheck(request)
    messages.success(request, "The passkey is removed.")
    return redirect("web:account_security")


def _not_owner() -> Forbidden:
    return Forbidden("only an owner of the account may require a second factor",
                     field="required", fix="ask an owner of this account")


@member(methods=["POST"], roles=[Role.OWNER], refusal=_not_owner)
def factor_requirement(request: HttpRequest, me: Member) -> HttpResponse:
    form = RequirementForm(request.POST)
    if form.is_valid():
        required = form.cleaned_data["required"] == "on"
        try:
            second_factor_policy.set_factor_required(
                principal=me.principal, actor_role=me.role, user=request.user,
                required=required)
        except ValidationFailed as refused:
            add_refusal(form, refused, "required")
        else:
            recheck(request)
            messages.success(request, "Every member now needs a second factor to sign in."
                             if required else "A second factor is up to each member now.")
            return redirect("web:account_security")
    return _refused_here(request, requirement_form=form)
