"""Pages. Each one checks membership (principal_for_member) as well as login."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.models import Account, ApiKey
from accounts.principal import principal_for_member
from memories.selectors import memory_list
from web.forms import SignUpForm
from web.services import sign_up


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if not settings.OPEN_SIGNUP:
        raise Http404("Sign-up is closed on this server: ask its owner for an invitation.")
    if request.user.is_authenticated:
        return redirect("web:dashboard")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user, _ = sign_up(email=form.cleaned_data["email"],
                          password=form.cleaned_data["password"])
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("web:dashboard")
    return render(request, "web/signup.html", {"form": form})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    principal, role = principal_for_member(request.user)
    keys = ApiKey.objects.filter(account_id=principal.account_id, revoked_at__isnull=True)
    if role == "member":
        keys = keys.filter(holder_id=request.user.pk)
    return render(request, "web/dashboard.html", {
        "account": Account.objects.get(pk=principal.account_id), "role": role,
        "memories": memory_list(principal),
        "keys": keys.select_related("holder", "default_memory").order_by("-created_at"),
        "mcp_url": request.build_absolute_uri("/mcp"),
    })
