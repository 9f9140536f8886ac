from django.conf import settings


def signup(request):
    return {"open_signup": settings.OPEN_SIGNUP}


def accounts(request):
    """The nav's account switcher: the signed-in person's accounts and the one acting now."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    from accounts.team import accounts_of
    from web.acting import CURRENT_ACCOUNT

    memberships = list(accounts_of(user))
    chosen = request.session.get(CURRENT_ACCOUNT)
    ids = [m.account_id for m in memberships]
    current = chosen if chosen in ids else (
        min(memberships, key=lambda m: m.pk).account_id if memberships else None)
    return {"my_memberships": memberships, "current_account_id": current}


def email_verification(request):
    """Whether to show the "confirm your email" banner (web/verification.py)."""
    from web.verification import is_unverified  # models are not ready when settings load
    return {"email_unverified": is_unverified(getattr(request, "user", None))}
