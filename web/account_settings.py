"""The account's settings page: its name (owners rename it), and the ways to its other
settings (secret redaction, team, deleting it)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts.account_names import NAME_CHARS, account_rename, require_may_rename
from echomem.errors import ValidationFailed
from web.access import Member, member
from web.refusals import add_refusal


class AccountNameForm(forms.Form):
    name = forms.CharField(label="Account name", max_length=NAME_CHARS,
                           error_messages={"required": "An account needs a name: type one, "
                                                       "e.g. your team's."},
                           help_text="What people see in the account menu, on the dashboard "
                                     "and in invitations. Agents never use it.")


@member(methods=["GET", "POST"])
def account_settings(request: HttpRequest, me: Member) -> HttpResponse:
    principal, role, account = me.principal, me.role, me.account
    form = AccountNameForm(request.POST or None, initial={"name": account.name})
    if request.method == "POST":
        require_may_rename(role)  # a 403 before the form is read
        if form.is_valid():
            try:
                renamed = account_rename(principal=principal, actor_role=role,
                                         name=form.cleaned_data["name"])
            except ValidationFailed as refused:
                add_refusal(form, refused, "name")
            else:
                messages.success(request, f"The account is now called {renamed.name}.")
                return redirect("web:account_settings")
    return render(request, "web/account_settings.html", {
        "account": account, "role": role, "is_owner": me.is_owner, "form": form})
