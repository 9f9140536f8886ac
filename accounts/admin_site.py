"""The admin site under the site's own sign-in rules: a staff member with a second factor
reaches it only once this session has passed that factor (at the site's second step, or
with the code on the admin's own sign-in form); one without a factor signs in as before.
Every change the admin makes is a POST, and each is a sensitive action: a session whose
last check of its person is stale confirms it's them first (accounts/reauth.py), as the
site's own sensitive pages do."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.admin import AdminSite
from django.shortcuts import redirect
from django.urls import reverse
from django_otp.admin import OTPAdminAuthenticationForm, OTPAdminSite

from accounts.reauth import identity_checked_recently
from accounts.second_factors import has_factor, verify_code
from echomem.errors import ValidationFailed


class SecondFactorAdminForm(OTPAdminAuthenticationForm):
    """The password, then the code, for a staff member who has a factor."""

    def clean(self):
        cleaned = super(OTPAdminAuthenticationForm, self).clean()
        user = self.get_user()
        if user is not None and has_factor(user=user):
            self.clean_otp(user)
        return cleaned

    def _verify_token(self, user, token, device=None):
        # The site's own check: the app's code or a recovery code, whichever device was
        # picked (a passkey signs in at the site's second step, then reaches the admin).
        try:
            return verify_code(user=user, code=token)
        except ValidationFailed as refused:
            raise forms.ValidationError(f"{refused.message}: {refused.fix}") from None


class SecondFactorAdminSite(AdminSite):
    login_form = SecondFactorAdminForm
    login_template = OTPAdminSite.login_template

    def has_permission(self, request) -> bool:
        user = request.user
        return super().has_permission(request) and (
            user.is_verified() or not has_factor(user=user))

    def admin_view(self, view, cacheable=False):
        inner = super().admin_view(view, cacheable)
        if view in (self.logout, self.password_change):
            # Signing out is never held up; a password change asks for the current one.
            return inner

        @wraps(inner)
        def guarded(request, *args, **kwargs):
            if request.method == "POST" and self.has_permission(request) \
                    and not identity_checked_recently(request.session):
                messages.info(request, "Nothing was changed yet: confirm it's you, then "
                                       "send the form again.")
                query = urlencode({"next": request.path})
                return redirect(f"{reverse('web:reauth')}?{query}")
            return inner(request, *args, **kwargs)

        return guarded
