"""Password reset with Django's own views and token generator, in the site's pages. The
link a person follows signs them in and lands on the dashboard; `echo-memory quickstart`
prints the same kind of link for the box's owner (sign_in_link)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import views as auth_views
from django.contrib.auth.tokens import default_token_generator
from django.shortcuts import render
from django.urls import reverse, reverse_lazy
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.backends import SIGN_IN_BACKEND
from accounts.passwords import password_changed
from accounts.sign_in_names import FoldedEmailField, users_matching
from accounts.where_from import network_of
from web import account_mail
from web.limits import by_address, by_posted, limited

INVALID_LINK = ("This link is not valid: it was used already, has expired, or was copied "
                "incompletely.")


def sign_in_link(user, base_url: str) -> str:
    """A one-time link to set `user`'s password and sign in, on the server at base_url."""
    path = reverse("web:password_reset_confirm", kwargs={
        "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
        "token": default_token_generator.make_token(user)})
    return base_url.rstrip("/") + path


class ResetRequestForm(auth_forms.PasswordResetForm):
    """The email, found in any case or width (accounts/sign_in_names.py), also for users
    stored before names were folded. One mail goes out either way: the link to each user
    found, or a note that no account can reset with the address, so that the time taken
    does not tell whether the address has an account."""

    email = FoldedEmailField(label="Email", max_length=254,
                             widget=auth_forms.forms.EmailInput(attrs={"autocomplete": "email"}))

    def get_users(self, email):
        return [user for user in users_matching(email, fields=("email",))
                if user.is_active and user.has_usable_password()]

    def save(self, *, request, **kwargs) -> None:
        email = self.cleaned_data["email"]
        if not self.get_users(email):
            account_mail.no_account_to_reset(email, request.build_absolute_uri)
            return
        super().save(request=request, **kwargs)


class ResetRequest(auth_views.PasswordResetView):
    """Asks for the email and mails the link (ResetRequestForm)."""

    form_class = ResetRequestForm
    template_name = "web/password_reset.html"
    email_template_name = "web/email/password_reset.txt"
    subject_template_name = "web/email/password_reset_subject.txt"
    success_url = reverse_lazy("web:password_reset_sent")


class ResetSent(auth_views.PasswordResetDoneView):
    template_name = "web/password_reset_sent.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(
            timeout_hours=settings.PASSWORD_RESET_TIMEOUT // 3600, **kwargs)


class ResetConfirm(auth_views.PasswordResetConfirmView):
    template_name = "web/password_reset_confirm.html"
    post_reset_login = True
    post_reset_login_backend = SIGN_IN_BACKEND
    success_url = reverse_lazy("web:dashboard")

    def render_to_response(self, context, **kwargs):
        if not self.validlink:  # a wrong or used link is not found, whoever asks
            return render(self.request, "web/link_invalid.html",
                          {"reason": INVALID_LINK, "again": reverse("web:password_reset")},
                          status=404)
        return super().render_to_response(context, **kwargs)

    def form_valid(self, form):
        response = super().form_valid(form)
        # Signed in here (post_reset_login): every other session of theirs ends.
        password_changed(user=form.user, keep_session_key=self.request.session.session_key,
                         network=network_of(self.request.META))
        messages.success(self.request, "Your password is set and you are signed in. Any "
                                       "other session of yours is signed out.")
        return response


request_view = limited(("password_reset_ip", by_address),
                       ("password_reset_email", by_posted("email")))(ResetRequest.as_view())
