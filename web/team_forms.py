from __future__ import annotations

from django import forms
from django.contrib.auth import password_validation

from accounts.sign_in_names import FoldedEmailField
from accounts.team import Role


class InviteForm(forms.Form):
    email = FoldedEmailField(max_length=150, widget=forms.EmailInput(
        attrs={"autocomplete": "off"}), help_text="The invitation link is emailed here.")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER,
                             help_text="Members use memories and their own keys; admins "
                                       "also manage members and keys; owners manage owners.")

    def __init__(self, *args, roles: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [c for c in Role.choices if c[0] in roles]


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class AcceptAsNewUserForm(forms.Form):
    password = forms.CharField(strip=False, widget=forms.PasswordInput(
        attrs={"autocomplete": "new-password", "autofocus": True}),
        help_text=password_validation.password_validators_help_text_html())

    def __init__(self, *args, email: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.email = email

    def clean_password(self) -> str:
        from django.contrib.auth import get_user_model

        password = self.cleaned_data["password"]
        user = get_user_model()(username=self.email, email=self.email)
        password_validation.validate_password(password, user)
        return password


class NewAccountForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="e.g. your team's or a project's name.")


class SwitchAccountForm(forms.Form):
    account = forms.IntegerField()
