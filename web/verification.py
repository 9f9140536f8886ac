"""Optional email verification (settings.VERIFY_EMAIL): sign-up mails a signed, expiring
link; until it is opened the person sees a banner and cannot create API keys."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.selectors import user_with_email
from web import account_mail
from web.limits import by_user, limited
from web.models import UnverifiedEmail

SALT = "web.verify-email"
INVALID_LINK = ("This confirmation link is not valid: it has expired, belongs to an "
                "address changed since, or was copied incompletely. Sign in and press "
                "“Send the link again”.")


def is_unverified(user) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and \
        UnverifiedEmail.objects.filter(user_id=user.pk).exists()


def mark_unverified(user) -> None:
    """At sign-up, in its transaction: the address is unconfirmed until the link is opened."""
    UnverifiedEmail.objects.update_or_create(user=user, defaults={"email": user.email})


def mail_link(user, absolute: account_mail.Absolute, *, signed_in: bool = False) -> bool:
    """Mail the confirmation link (with the sign-in page's, unless the person is signed in);
    False (logged) when the mail server refuses or cannot be reached."""
    token = signing.dumps({"user": user.pk, "email": user.email}, salt=SALT)
    return account_mail.send(
        subject="Confirm your email for Echo Memory", template="verify_email.txt",
        context={"link": absolute(reverse("web:verify_email", kwargs={"token": token})),
                 "hours": settings.VERIFY_EMAIL_MAX_AGE // 3600,
                 "sign_in": "" if signed_in else absolute(reverse("web:login"))},
        to=user.email)


def send_link(request: HttpRequest, user) -> bool:
    """Mail the link again to the signed-in person; a refusal is shown to them."""
    if mail_link(user, request.build_absolute_uri, signed_in=True):
        return True
    messages.error(request, "We could not send the confirmation email just now; press "
                            "“Send the link again” in a few minutes.")
    return False


def confirm(token: str):
    """The user the token confirms, its row removed; None for a bad, expired or stale one."""
    try:
        claim = signing.loads(token, salt=SALT, max_age=settings.VERIFY_EMAIL_MAX_AGE)
    except signing.BadSignature:  # SignatureExpired is one too
        return None
    user = user_with_email(claim.get("user"), claim.get("email"))
    if user is None:  # the address has changed since the link was sent
        return None
    UnverifiedEmail.objects.filter(user=user, email=user.email).delete()
    return None if is_unverified(user) else user  # confirmed now, or before


def verify_email(request: HttpRequest, token: str) -> HttpResponse:
    user = confirm(token)
    if user is None:
        return render(request, "web/link_invalid.html", {"reason": INVALID_LINK}, status=404)
    messages.success(request, f"Thank you: {user.email} is confirmed.")
    return redirect("web:dashboard" if request.user.is_authenticated else "web:login")


@login_required
@require_POST
@limited(("verify_resend_user", by_user))
def resend(request: HttpRequest) -> HttpResponse:
    if is_unverified(request.user):
        if not send_link(request, request.user):
            return redirect("web:dashboard")
        messages.success(request, f"A new link is on its way to {request.user.email}; it is "
                                  f"valid for {settings.VERIFY_EMAIL_MAX_AGE // 3600} hours.")
    else:
        messages.info(request, "Your email is confirmed already.")
    return redirect("web:dashboard")
