"""Team pages: members and invitations, accepting an invitation, switching and creating
accounts. The rules (who may do what, the last owner) are in accounts.team."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import team
from accounts.backends import SIGN_IN_BACKEND
from accounts.principal import principal_for_member
from accounts.selectors import live_keys_held, pending_invitation
from accounts.team import Role
from echomem.errors import NotFound, ValidationFailed
from memories.catalog.new_accounts import another_account_create
from web import shown_once
from web.access import CURRENT_ACCOUNT, Member, member
from web.reauth import sensitive
from web.refusals import add_refusal, refusal_text
from web.team_forms import (
    AcceptAsNewUserForm,
    InviteForm,
    NewAccountForm,
    RoleForm,
    SwitchAccountForm,
)
from web.views import LIST_PAGE


def _invitable_roles(role: str) -> list[str]:
    return [r for r in Role.values if role in team.MANAGERS and team.may_manage(role, r)]


@never_cache  # it may show a new invitation's link, once
@member(methods=["GET", "POST"])
@sensitive(posts_only=True)
def team_page(request: HttpRequest, me: Member) -> HttpResponse:
    principal, role = me.principal, me.role
    form = InviteForm(request.POST or None, roles=_invitable_roles(role))
    if request.method == "POST":
        team.require_may_manage(role, Role.MEMBER, field="email")
        if form.is_valid():
            links: list[str] = []

            def link_for(token: str) -> str:
                links.append(request.build_absolute_uri(
                    reverse("web:invitation_accept", args=[token])))
                return links[-1]

            try:
                invitation = team.invite(
                    principal=principal, actor_role=role, email=form.cleaned_data["email"],
                    role=form.cleaned_data["role"], link_for=link_for)
            except ValidationFailed as refused:
                add_refusal(form, refused)
            else:
                messages.success(request, f"Invitation sent to {invitation.email}; the link "
                                          "works once, until "
                                          f"{invitation.expires_at:%Y-%m-%d %H:%M} UTC "
                                          "unless you revoke it.")
                # Shown once on the GET below, for a box whose mail does not reach them.
                shown_once.keep(request, "invitation", invitation.pk, links[-1])
                return redirect("web:team")
    new_invitation = _new_invitation(request, principal)
    members = Paginator(team.team_members(principal), LIST_PAGE).get_page(
        request.GET.get("members"))
    invitations = Paginator(team.pending_invitations(principal), LIST_PAGE).get_page(
        request.GET.get("invitations"))
    return render(request, "web/team_page.html", {
        "member_page": members, "invitation_page": invitations,
        "may_leave": not team.is_last_owner(principal, role),
        "account": me.account, "role": role,
        "may_invite": role in team.MANAGERS, "form": form,
        "members": [(m, role in team.MANAGERS and team.may_manage(role, m.role)
                     and m.user_id != request.user.pk) for m in members],
        "invitations": [(i, role in team.MANAGERS and team.may_manage(role, i.role))
                        for i in invitations],
        "roles": _invitable_roles(role), "new_invitation": new_invitation,
    })


def _new_invitation(request: HttpRequest, principal) -> tuple[object, str] | None:
    """The invitation this person just sent and its link, on the first GET after it only."""
    held = shown_once.take(request, "invitation")
    if held is None:
        return None
    invitation = pending_invitation(principal, held[0])
    return (invitation, held[1]) if invitation is not None else None


@member(methods=["GET", "POST"])
@sensitive
def member_role(request: HttpRequest, me: Member, member_id: int) -> HttpResponse:
    principal, role = me.principal, me.role
    membership = team.member_of_account(principal, member_id)
    team.require_may_manage(role, membership.role, field="member")
    form = RoleForm(request.POST or None, initial={"role": membership.role})
    form.fields["role"].choices = [c for c in Role.choices if team.may_manage(role, c[0])]
    if request.method == "POST" and form.is_valid():
        try:
            team.member_role_change(principal=principal, actor_role=role, member_id=member_id,
                                    role=form.cleaned_data["role"])
        except ValidationFailed as refused:
            add_refusal(form, refused, "role")
        else:
            messages.success(request, f"{team.email_of(membership.user) or membership.user} "
                                      f"is now {form.cleaned_data['role']}.")
            return redirect("web:team")
    return render(request, "web/team_member_role.html", {"membership": membership,
                                                          "form": form})


@member(methods=["GET", "POST"])
@sensitive
def member_remove(request: HttpRequest, me: Member, member_id: int) -> HttpResponse:
    principal, role = me.principal, me.role
    membership = team.member_of_account(principal, member_id)
    team.require_may_manage(role, membership.role, field="member")
    error = None
    if request.method == "POST":
        try:
            revoked = team.member_remove(principal=principal, actor_role=role,
                                         member_id=member_id)
        except ValidationFailed as refused:
            error = refusal_text(refused)
        else:
            messages.success(request, f"{membership.user} is removed from the account and "
                                      f"{revoked} of their keys are revoked.")
            return redirect("web:team")
    keys = live_keys_held(principal, membership.user_id)
    return render(request, "web/team_member_remove.html", {
        "membership": membership, "keys": keys, "error": error})


@member(methods=["GET", "POST"])
@sensitive
def invitation_revoke(request: HttpRequest, me: Member, invitation_id: int) -> HttpResponse:
    principal, role = me.principal, me.role
    invitation = team.invitation_of_account(principal, invitation_id)
    team.require_may_manage(role, invitation.role, field="invitation")
    if request.method == "POST":
        team.invitation_revoke(principal=principal, actor_role=role,
                               invitation_id=invitation_id)
        messages.success(request, f"The invitation to {invitation.email} is revoked; its "
                                  "link no longer works.")
        return redirect("web:team")
    return render(request, "web/team_invitation_revoke.html", {"invitation": invitation})


@member(methods=["GET", "POST"])
def account_leave(request: HttpRequest, me: Member) -> HttpResponse:
    account = me.account
    error = None
    if request.method == "POST":
        try:
            revoked = team.account_leave(principal=me.principal)
        except ValidationFailed as refused:
            error = refusal_text(refused)
        else:
            request.session.pop(CURRENT_ACCOUNT, None)
            messages.success(request, f"You left {account.name}; {revoked} of your keys there "
                                      "are revoked.")
            return redirect("web:dashboard")
    return render(request, "web/team_leave.html", {"account": account, "role": me.role,
                                                    "error": error})


@require_http_methods(["GET", "POST"])
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    user = request.user if request.user.is_authenticated else None
    try:
        invitation = team.invitation_for_user(token, user)
    except team.InvitationUnusable as unusable:
        return _unusable(request, unusable)
    except NotFound:
        return render(request, "web/team_invitation_unusable.html", {"reason": "wrong_email"},
                      status=404)
    form = None
    has_user = user is None and team.user_exists(invitation.email)
    if user is None and not has_user:
        form = AcceptAsNewUserForm(request.POST or None, email=invitation.email)
    if request.method == "POST":
        try:
            if user is not None:
                membership = team.accept(token=token, user=user)
            elif form is not None and form.is_valid():
                user, membership = team.accept_as_new_user(
                    token=token, password=form.cleaned_data["password"])
                login(request, user, backend=SIGN_IN_BACKEND)
            else:
                membership = None
        except team.InvitationUnusable as unusable:
            return _unusable(request, unusable)
        except ValidationFailed as refused:
            add_refusal(form, refused, None)
            membership = None
        if membership is not None:
            request.session[CURRENT_ACCOUNT] = membership.account_id
            messages.success(request, f"You joined {invitation.account.name} as "
                                      f"{membership.role}.")
            return redirect("web:dashboard")
    return render(request, "web/team_invitation_accept.html", {
        "invitation": invitation, "form": form, "has_user": has_user,
        "login_url": f"{reverse('web:login')}?next={request.path}"})


def _unusable(request: HttpRequest, unusable: team.InvitationUnusable) -> HttpResponse:
    return render(request, "web/team_invitation_unusable.html",
                  {"reason": unusable.reason, "invitation": unusable.invitation},
                  status=404 if unusable.reason == "unknown" else 410)


@login_required
@require_POST
def account_switch(request: HttpRequest) -> HttpResponse:
    form = SwitchAccountForm(request.POST)
    if not form.is_valid():
        raise Http404("pick one of your accounts from the menu")
    try:
        principal, _ = principal_for_member(request.user, form.cleaned_data["account"])
    except NotFound as missing:
        raise Http404(missing.message) from None
    request.session[CURRENT_ACCOUNT] = principal.account_id
    return redirect("web:dashboard")


@login_required
@require_http_methods(["GET", "POST"])
def account_new(request: HttpRequest) -> HttpResponse:
    form = NewAccountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            account = another_account_create(user=request.user,
                                             name=form.cleaned_data["name"])
        except ValidationFailed as refused:
            add_refusal(form, refused, "name")
        else:
            request.session[CURRENT_ACCOUNT] = account.pk
            messages.success(request, f"{account.name} is ready; you own it and are acting "
                                      "in it now.")
            return redirect("web:dashboard")
    return render(request, "web/account_new.html", {"form": form})
