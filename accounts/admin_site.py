"""The admin site under the site's own sign-in rules: a staff member with a second factor
reaches it only once this session has passed that factor (at the site's second step, or
with the code on the admin's own sign-in form); one without a factor signs in as before."""

from __future__ import annotations

from django import forms
from django.contrib.admin import AdminSite
from django_otp.admin import OTPAdminAuthenticationForm, OTPAdminSite

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
