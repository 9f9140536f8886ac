"""Signing in by name and password, the name found through its sign-in name
(accounts/sign_in_names.py): the site's sign-in page and the admin's both come here."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from accounts.sign_in_names import user_for_sign_in

# For login() after a flow that has proved who someone is (a reset link, an invitation).
SIGN_IN_BACKEND = "accounts.backends.SignInNameBackend"


class SignInNameBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        user_model = get_user_model()
        if username is None:
            username = kwargs.get(user_model.USERNAME_FIELD)
        if username is None or password is None:
            return None
        user = user_for_sign_in(username)
        if user is None:
            # Hash anyway, as ModelBackend does: an unknown name takes as long as a wrong
            # password, so the time taken does not say which names have accounts.
            user_model().set_password(password)
            return None
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None
