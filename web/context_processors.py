from django.conf import settings
from django.utils.functional import SimpleLazyObject


def signup(request):
    return {"open_signup": settings.OPEN_SIGNUP}


def accounts(request):
    """The nav's account switcher: the signed-in person's accounts and the one acting now."""
    memberships, current = _acting_account(request)
    if memberships is None:
        return {}
    return {"my_memberships": memberships, "current_account_id": current}


def _acting_account(request):
    """(memberships, acting account id) of the signed-in person, read once per request:
    the switcher and the usage banner both need them."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None, None
    if not hasattr(request, "_echo_acting_account"):
        from accounts.team import accounts_of
        from web.access import CURRENT_ACCOUNT

        memberships = list(accounts_of(user))
        chosen = request.session.get(CURRENT_ACCOUNT)
        ids = [m.account_id for m in memberships]
        current = chosen if chosen in ids else (
            min(memberships, key=lambda m: m.pk).account_id if memberships else None)
        request._echo_acting_account = (memberships, current)
    return request._echo_acting_account


def email_verification(request):
    """Whether to show the "confirm your email" banner (web/verification.py)."""
    from web.verification import is_unverified  # models are not ready when settings load
    return {"email_unverified": is_unverified(getattr(request, "user", None))}


def billing(request):
    """The nav's Billing link and the usage banner (at 80% and 100% of the month's units).

    Hosted only: a self-hosted box meters nothing, so it pays no query for this. The
    banner's one query runs when a page draws it (lazily), not for every template."""
    from billing.ledger import metered

    if not metered():
        return {"billing_enabled": False}
    return {"billing_enabled": True,
            "usage_banner": SimpleLazyObject(lambda: _usage_banner(request))}


def _usage_banner(request):
    from billing.usage import standing

    _, account_id = _acting_account(request)
    if account_id is None:
        return None
    current = standing(account_id)
    return current if current.level is not None else None
