"""A deleted account stops paying: its Stripe subscription is cancelled.

A signal, because the erasure path (memories/erasure/services.py) must not import billing, and
the account row is what every deletion goes through. The cancellation runs after the
deletion commits (a rolled-back deletion keeps paying for what it still has) and is best
effort: Stripe being down never blocks a deletion; the failure is logged for the
operator, who cancels by hand (the log line names the subscription).
"""

from __future__ import annotations

import logging

import stripe
from django.db import transaction

from billing.models import Subscription
from billing.payments import configured
from billing.stripe_api import client

logger = logging.getLogger(__name__)


def cancel_on_account_delete(sender, instance, **kwargs) -> None:
    subscription = (Subscription.objects.filter(account_id=instance.pk)
                    .exclude(stripe_subscription_id="")
                    .exclude(status=Subscription.Status.CANCELED)
                    .values_list("stripe_subscription_id", flat=True).first())
    if subscription and configured():
        transaction.on_commit(lambda: cancel_subscription(subscription, account_id=instance.pk))


def cancel_subscription(subscription_id: str, *, account_id: int) -> bool:
    try:
        client().v1.subscriptions.cancel(subscription_id)
    except stripe.StripeError as failure:
        logger.warning("account %s was deleted but its Stripe subscription %s could not be "
                       "cancelled (cancel it in the Stripe dashboard): %s",
                       account_id, subscription_id, failure)
        return False
    logger.info("account %s deleted: Stripe subscription %s cancelled", account_id,
                subscription_id)
    return True
