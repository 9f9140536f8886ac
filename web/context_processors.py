from django.conf import settings


def signup(request):
    return {"open_signup": settings.OPEN_SIGNUP}


def email_verification(request):
    """Whether to show the "confirm your email" banner (web/verification.py)."""
    from web.verification import is_unverified  # models are not ready when settings load
    return {"email_unverified": is_unverified(getattr(request, "user", None))}
