"""The person's own sessions: every browser signed in as them (the site's sign-in and the
admin's), and the way to sign one, or all the others, out. A person's, not an account's:
no membership is needed, and no one sees another person's sessions."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_GET, require_POST

from accounts.sessions import (
    active_sessions,
    session_seen,
    sign_out_other_sessions,
    sign_out_session,
)
from echomem.errors import NotFound


@login_required
@require_GET
def sessions_page(request: HttpRequest) -> HttpResponse:
    current = request.session.session_key
    session_seen(user=request.user, session=request.session, meta=request.META, at_once=True)
    rows = active_sessions(request.user)
    return render(request, "web/sessions.html", {
        "sessions": [(row, row.session_key == current) for row in rows],
        "others": sum(row.session_key != current for row in rows)})


@login_required
@require_POST
def session_sign_out(request: HttpRequest, sign_in_id: int) -> HttpResponse:
    try:
        row = sign_out_session(user=request.user, sign_in_id=sign_in_id,
                               current_session_key=request.session.session_key)
    except NotFound as missing:
        raise Http404(missing.message) from None
    messages.success(request, f"The session on {row.device} is signed out.")
    return redirect("web:sessions")


@login_required
@require_POST
def sessions_sign_out_others(request: HttpRequest) -> HttpResponse:
    ended = sign_out_other_sessions(request.user, keep_session_key=request.session.session_key)
    messages.success(request, f"{ended} other session{pluralize(ended)} signed out; this one "
                              "stays signed in." if ended else
                     "There were no other sessions to sign out.")
    return redirect("web:sessions")
