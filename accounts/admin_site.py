"""The admin site under the site's own sign-in rules: a staff member with a second factor
reaches it only once this session has passed that factor (at the site's second step, or
with the code on the admin's own sign-in form); one without a factor signs in as before."""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django_otp.admin import OTPAdminAuthenticationForm, OTPAdminSite

from accounts.second_factors import has_factor


class SecondFactorAdminForm(OTPAdminAuthenticationForm):
    """The password, then the code, for a staff member who has a factor."""

    def clean(self):
        cleaned = super(OTPAdminAuthenticationForm, self).clean()
        user = self.get_user()
        if user is not None and has_factor(user=user):
            self.clean_otp(user)
        return cleaned


class SecondFactorAdminSite(AdminSite):
    login_form = SecondFactorAdminForm
    login_template = OTPAdminSite.login_template

    def has_permission(self, request) -> bool:
        user = request.user
        return super().has_permission(request) and (
            user.is_verified() or not has_factor(user=user))
