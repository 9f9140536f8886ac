"""Usage alerts: an email to the account's owners and admins at 80% and at 100% of the
month's allowance, each at most once a month (the flags on the month's ledger row)."""

from __future__ import annotations

import logging
from functools import partial

from django.core.mail import send_mail
from django.db import connection, transaction

from accounts.models import Account, Membership
from accounts.team import email_of
from echomem.public_url import public_url

logger = logging.getLogger(__name__)
# The same lines draw the dashboard's banner (billing/usage.py).
WARN_PERCENT = 80
FULL_PERCENT = 100
THRESHOLDS = ((WARN_PERCENT, "alerted_80_at"), (FULL_PERCENT, "alerted_100_at"))


def on_charge(period_id: int, account_id: int, *, before: int, after: int, allowed: int,
              alerted_80: bool, alerted_100: bool) -> None:
    """Inside the charge's transaction: mark each threshold this charge crossed for the
    first time this month, and send its email once the charge has committed."""
    already = {80: alerted_80, 100: alerted_100}
    for percent, column in THRESHOLDS:
        line = allowed * percent / 100
        if after >= line and not already[percent]:
            with connection.cursor() as cursor:
                # Only the transaction that sets the flag sends the mail.
                cursor.execute(f"UPDATE billing_usageperiod SET {column} = now() "
                               f"WHERE id = %s AND {column} IS NULL", [period_id])
                if cursor.rowcount:
                    transaction.on_commit(partial(send_alert, account_id, percent, after,
                                                  allowed))


def recipients(account_id: int) -> list[str]:
    members = (Membership.objects.select_related("user")
               .filter(account_id=account_id,
                       role__in=[Membership.Role.OWNER, Membership.Role.ADMIN]))
    return sorted({email_of(m.user) for m in members if email_of(m.user)})


def send_alert(account_id: int, percent: int, used: int, allowed: int) -> None:
    account = Account.objects.filter(pk=account_id).first()
    to = recipients(account_id)
    if account is None or not to:
        return
    link = public_url("/billing")
    if percent >= 100:
        subject = f"Echo Memory: {account.name} has used all of this month's units"
        body = (f"{account.name} has used {used:,} of its {allowed:,} units this month. "
                "Writes that need more units are refused and recalls return nothing until "
                f"the month resets or the plan grows.\n\nUpgrade or see usage: {link}\n")
    else:
        subject = f"Echo Memory: {account.name} has used {percent}% of this month's units"
        body = (f"{account.name} has used {used:,} of its {allowed:,} units this month "
                f"({percent}%).\n\nSee usage or upgrade: {link}\n")
    try:
        send_mail(subject, body, None, to)
    except Exception:  # a mail server down must not fail the call that crossed the line
        logger.exception("usage alert email for account %s (%s%%) was not sent",
                         account_id, percent)
