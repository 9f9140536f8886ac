"""Sensitive actions ask the person to confirm it's them when the session's last check of
who they are is older than settings.REAUTH_MAX_AGE (accounts/reauth.py keeps the time and
checks the credential). `sensitive` guards a view; `confirm_its_you` is the page that asks.

A refused GET comes back to the page it asked for once confirmed. A refused POST changed
nothing: the person is told so and comes back to the form it was sent from, to send it
again (a form's fields are not kept across: a secret typed into one must not wait in the
session).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.reauth import confirm_identity, identity_checked_recently, verifiers_for
from echomem.errors import ValidationFailed
from web.refusals import add_refusal

NOT_SENT = ("Nothing was changed yet: confirm it's you, then send the form again.")


def sensitive(view: Callable[..., HttpResponse] | None = None, *, posts_only: bool = False,
              back_to: str | None = None) -> Any:
    """Guard a view (under `member`, so sign-in, membership and role come first): a session
    whose last check is stale is sent to confirm it's them. `posts_only`: reading the page
    needs no check (the team page), only its forms. `back_to`: the URL name of the page
    whose form posts here, for a POST-only view (billing's checkout); else the view's own
    path. Views carry `web_reauth` so a test can find every guarded route."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if (posts_only and request.method != "POST") or \
                    identity_checked_recently(request.session):
                return view(request, *args, **kwargs)
            return ask_to_confirm(request, back_to=back_to)

        guarded.web_reauth = True
        return guarded

    return decorate(view) if view is not None else decorate


def ask_to_confirm(request: HttpRequest, *, back_to: str | None = None) -> HttpResponse:
    if request.method in ("GET", "HEAD"):
        then = request.get_full_path()
    else:
        then = reverse(back_to) if back_to else request.path
        messages.info(request, NOT_SENT)
    return redirect(f"{reverse('web:reauth')}?{urlencode({'next': then})}")


_WIDGETS = {
    "password": lambda v: forms.PasswordInput(attrs={"autocomplete": v.autocomplete}),
    "code": lambda v: forms.TextInput(attrs={"autocomplete": v.autocomplete,
                                             "inputmode": "numeric"}),
    "hidden": lambda v: forms.HiddenInput(attrs={"data-verifier": v.kind}),
}


class ConfirmForm(forms.Form):
    """One field per way this person can confirm it's them (accounts.reauth.VERIFIERS: the
    password, and whatever a second factor registers); the first one filled in is checked."""

    def __init__(self, data=None, *, user, session) -> None:
        super().__init__(data)
        self.user, self.session = user, session
        self.verifiers = verifiers_for(user)
        for verifier in self.verifiers:
            self.fields[verifier.kind] = forms.CharField(
                label=verifier.label, required=False, max_length=8192, strip=False,
                widget=_WIDGETS[verifier.input](verifier), help_text=verifier.help_text)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not self.verifiers:
            raise forms.ValidationError(
                "This account has no password to confirm it with: set one with "
                "“Forgot your password?” on the sign-in page, then try again.")
        given = next((v.kind for v in self.verifiers if cleaned.get(v.kind)), None)
        if given is None:
            first = self.verifiers[0]
            self.add_error(first.kind, f"Type your {first.label.lower()} to go on.")
            return cleaned
        try:
            confirm_identity(user=self.user, session=self.session, kind=given,
                             value=cleaned[given])
        except ValidationFailed as refused:
            add_refusal(self, refused, otherwise=None)
        return cleaned


def _then(request: HttpRequest) -> str:
    """Where to go once confirmed: `next` when it is a path on this site, else the dashboard."""
    then = request.POST.get("next") or request.GET.get("next") or ""
    if "\x00" in then or len(then) > 2000 or not then.startswith("/") or \
            not url_has_allowed_host_and_scheme(then, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure()):
        return reverse("web:dashboard")
    return then


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def confirm_its_you(request: HttpRequest) -> HttpResponse:
    then = _then(request)
    form = ConfirmForm(request.POST or None, user=request.user, session=request.session)
    if request.method == "POST" and form.is_valid():
        return redirect(then)
    return render(request, "web/reauth.html", {
        "form": form, "next": then, "minutes": max(settings.REAUTH_MAX_AGE // 60, 1)})
