"""The admin's user pages, with user names and emails folded to sign-in names
(accounts/sign_in_names.py) and refused when another user has them in any case or width:
the admin cannot make the look-alike accounts that sign-up refuses."""

from __future__ import annotations

from django import forms
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import forms as auth_forms

from accounts.sign_in_names import FoldedEmailField, sign_in_name, users_matching

NAME_LENGTH = 150  # the user table's user name column


def _folded_and_free(value: str, *, field: str, instance) -> str:
    """`value` as a sign-in name, or a ValidationError naming who has it already."""
    folded = sign_in_name(value or "")
    if instance.pk is not None and value == getattr(instance, field):
        return value  # unchanged: kept as stored, even from before names were folded
    if field == "username" and len(folded) > NAME_LENGTH:
        raise forms.ValidationError(
            f"This user name is {len(folded)} characters once folded (NFKC, any case); "
            f"use at most {NAME_LENGTH}.")
    if folded and any(user.pk != instance.pk for user in users_matching(folded)):
        raise forms.ValidationError(
            f"Another user signs in as {folded} or has it as their email (compared in any "
            "case or width); pick another, or edit that user instead.")
    return folded


class UserAddForm(auth_forms.AdminUserCreationForm):
    def clean_username(self):
        return _folded_and_free(self.cleaned_data.get("username"), field="username",
                                instance=self.instance)


class UserChangeForm(auth_forms.UserChangeForm):
    email = FoldedEmailField(label="Email address", required=False, max_length=254)

    def clean_username(self):
        return _folded_and_free(self.cleaned_data.get("username"), field="username",
                                instance=self.instance)

    def clean_email(self):
        return _folded_and_free(self.cleaned_data.get("email"), field="email",
                                instance=self.instance)


class UserAdmin(auth_admin.UserAdmin):
    form = UserChangeForm
    add_form = UserAddForm

    def user_change_password(self, request, id, form_url=""):
        # An operator's new password for a user signs that user's sessions out and tells them.
        from accounts.passwords import after_admin_password_change

        key_before = request.session.session_key
        response = super().user_change_password(request, id, form_url)
        user = self.get_object(request, id)
        if user is None:
            return response
        return after_admin_password_change(request, user, response, key_before=key_before)


def own_password_change(request):
    """The admin site's "change password" page for the signed-in operator, which also signs
    out their other sessions (echomem/urls.py routes it ahead of the admin's own)."""
    from django.contrib import admin

    from accounts.passwords import after_admin_password_change

    key_before = request.session.session_key
    response = admin.site.password_change(request)
    if request.user.is_authenticated:
        after_admin_password_change(request, request.user, response, key_before=key_before)
    return response
