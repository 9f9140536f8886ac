"""Connected apps: the OAuth connections of the account (accounts/connections.py). A member
sees and revokes their own; an owner or admin sees and revokes the whole team's."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.html import format_html

from accounts.connection_views import connections_with_limits
from accounts.connections import connections_of, revocable_connection, revoke
from accounts.team import MANAGERS
from echomem.admission import connection_rates
from web.access import Member, member
from web.audit_links import audit_entry
from web.connect import mcp_url
from web.reauth import sensitive

LIST_PAGE = 25


@member(methods=["GET"])
def connected_apps(request: HttpRequest, me: Member) -> HttpResponse:
    whole_team = me.role in MANAGERS
    listed = connections_of(account_id=me.principal.account_id,
                            user_id=None if whole_team else me.principal.holder_id)
    page = Paginator(listed, LIST_PAGE).get_page(request.GET.get("page"))
    rows = connections_with_limits(me.principal.account_id, page.object_list)
    # Each app's window as it stands: read, not counted (one round trip for the page).
    rates = connection_rates(me.principal.account_id, [row.connection for row in rows])
    return render(request, "web/connected_apps.html", {
        "connections": [(row, rates[row.connection.pk]) for row in rows],
        "page": page, "whole_team": whole_team, "mcp_url": mcp_url(request)})


@member(methods=["GET", "POST"])
@sensitive(posts_only=True)
def connected_app_revoke(request: HttpRequest, me: Member, connection_id: int) -> HttpResponse:
    connection = revocable_connection(account_id=me.principal.account_id,
                                      user_id=me.principal.holder_id, role=me.role,
                                      connection_id=connection_id)
    if request.method == "POST":
        revoke(connection, actor_id=request.user.pk)
        messages.success(request, format_html(
            "{} is disconnected; its tokens are refused from its next request. {}",
            connection.application.name or "The app", audit_entry("connection.revoked")))
        return redirect("web:connected_apps")
    [row] = connections_with_limits(me.principal.account_id, [connection])
    return render(request, "web/connected_app_revoke.html", {"row": row})
