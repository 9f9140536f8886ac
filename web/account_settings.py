"""The account's settings page: its name (owners rename it), and the ways to its other
settings (secret redaction, team, deleting it)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.account_names import NAME_CHARS, account_rename, require_may_rename
from accounts.models import Account, Membership
from echomem.errors import ValidationFailed
from web.acting import acting
from web.views import member_page


class AccountNameForm(forms.Form):
    name = forms.CharField(label="Account name", max_length=NAME_CHARS,
                           error_messages={"required": "An account needs a name: type one, "
                                                       "e.g. your team's."},
                           help_text="What people see in the account menu, on the dashboard "
                                     "and in invitations. Agents never use it.")


@member_page
@require_http_methods(["GET", "POST"])
def account_settings(request: HttpRequest) -> HttpResponse:
    principal, role = acting(request)
    account = Account.objects.get(pk=principal.account_id)
    is_owner = role == Membership.Role.OWNER
    form = AccountNameForm(request.POST or None, initial={"name": account.name})
    if request.method == "POST":
        require_may_rename(role)  # a 403 before the form is read
        if form.is_valid():
            try:
                renamed = account_rename(principal=principal, actor_role=role,
                                         name=form.cleaned_data["name"])
            except ValidationFailed as refused:
                form.add_error("name", f"{refused.message}: {refused.fix}")
            else:
                messages.success(request, f"The account is now called {renamed.name}.")
                return redirect("web:account_settings")
    return render(request, "web/account_settings.html", {
        "account": account, "role": role, "is_owner": is_owner, "form": form})
