"""A signed-in person changes their password: the current one first (Django's own form and
validators), then every other session of theirs is signed out and they are mailed
(accounts/passwords.py). The page is a password guess like "Confirm it's you", so it counts
in the same per-person limit (web/urls.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from accounts.passwords import password_changed
from accounts.where_from import network_of


@sensitive_post_parameters()
@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def password_change(request: HttpRequest) -> HttpResponse:
    form = PasswordChangeForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        form.save()
        key_before = request.session.session_key
        update_session_auth_hash(request, form.user)  # this session stays, with a new key
        ended = password_changed(user=form.user, key_before=key_before,
                                 keep_session_key=request.session.session_key,
                                 network=network_of(request.META))
        messages.success(request, f"Your password is changed. {ended} other "
                                  f"session{pluralize(ended)} signed out.")
        return redirect("web:sessions")
    return render(request, "web/password_change.html", {"form": form})
