"""The sign-up pages. A POST with a valid form answers the same whether or not the email
has an account (web/services.py sign_up_or_remind mails either way): a redirect to a
page that says to check the inbox. Nobody is signed in by it; a new person signs in with
the password they chose, or opens the link in the mail."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from web.forms import SignUpForm
from web.services import sign_up_or_remind

# The address the "check your email" page names, kept in the session by either answer.
SENT_TO = "signup_sent_to"
CLOSED = "Sign-up is closed on this server: ask its owner for an invitation."


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if not settings.OPEN_SIGNUP:
        raise Http404(CLOSED)
    if request.user.is_authenticated:
        return redirect("web:dashboard")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        sign_up_or_remind(email=form.cleaned_data["email"],
                          password=form.cleaned_data["password"],
                          absolute=request.build_absolute_uri)
        request.session[SENT_TO] = form.cleaned_data["email"]
        return redirect("web:signup_sent")
    return render(request, "web/signup.html", {"form": form})


@require_GET
def signup_sent(request: HttpRequest) -> HttpResponse:
    if not settings.OPEN_SIGNUP:
        raise Http404(CLOSED)
    return render(request, "web/signup_sent.html", {
        "email": request.session.get(SENT_TO), "verify": settings.VERIFY_EMAIL})
