"""Prove, against a Stripe test-mode account, what localstripe and the tests' stub cannot:
real Checkout and portal pages, Price objects, real signatures and Stripe's retries.

Run it on a hosted-shape server (ECHO_MEMORY_SELF_HOSTED=0) whose webhook Stripe can reach,
for example with the Stripe CLI forwarding to it:

    stripe listen --forward-to http://127.0.0.1:8000/billing/stripe/webhook
    # the CLI prints whsec_...: the server runs with it as ECHO_MEMORY_STRIPE_WEBHOOK_SECRET
    ECHO_MEMORY_STRIPE_SECRET_KEY=sk_test_... ECHO_MEMORY_STRIPE_WEBHOOK_SECRET=whsec_... \
        echo-memory serve
    ECHO_MEMORY_STRIPE_SECRET_KEY=sk_test_... \
        python build_tools/stripe_test_mode_check.py --account 1 --email you@example.com

It creates a product and a monthly Price in the test account, sets the plan's Stripe price
id to it, opens a Checkout session and (after payment) a portal session through
billing/payments.py, prints each URL for a person to complete (card 4242 4242 4242 4242,
any future date, any CVC), and polls the server's StripeEvent table and the account's plan
until the result lands. It refuses live keys.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--account", type=int, required=True, help="the account id to upgrade")
    parser.add_argument("--email", required=True, help="the Stripe customer's email")
    parser.add_argument("--plan", default="pro", help="the plan slug to sell (default pro)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000",
                        help="where Checkout and the portal send the person back")
    parser.add_argument("--timeout", type=int, default=600, help="seconds to wait each step")
    args = parser.parse_args()

    key = os.environ.get("ECHO_MEMORY_STRIPE_SECRET_KEY", "")
    if not key.startswith(("sk_test_", "rk_test_")):
        print("Set ECHO_MEMORY_STRIPE_SECRET_KEY to a TEST secret key (sk_test_...).")
        return 2

    import django

    django.setup()
    from accounts.models import Account
    from billing.models import Plan, StripeEvent, Subscription
    from billing.payments import checkout_url, portal_url
    from billing.plans import effective_plan
    from billing.stripe_api import client

    account = Account.objects.get(pk=args.account)
    plan = Plan.objects.get(slug=args.plan)
    stripe_client = client()

    product = stripe_client.v1.products.create(params={"name": f"Echo Memory {plan.name}"})
    price = stripe_client.v1.prices.create(params={
        "product": product.id, "currency": "usd", "unit_amount": plan.price_cents or 100,
        "recurring": {"interval": "month"}})
    plan.stripe_price_id = price.id
    plan.save(update_fields=["stripe_price_id"])
    print(f"1. Created {product.id} and {price.id}; plan {plan.slug} now sells it.")

    started = time.time()
    url = checkout_url(account=account, plan=plan, email=args.email,
                       success_url=f"{args.base_url}/billing?checkout=done",
                       cancel_url=f"{args.base_url}/billing?checkout=cancelled")
    print(f"2. Open this Checkout page and pay with 4242 4242 4242 4242:\n   {url}")
    _wait(args.timeout, "checkout.session.completed handled and the plan in force",
          lambda: _handled(StripeEvent, "checkout.session.completed", started)
          and effective_plan(account.pk).pk == plan.pk)
    subscription = Subscription.objects.get(account=account)
    print(f"   Plan is {effective_plan(account.pk).name}; subscription "
          f"{subscription.stripe_subscription_id} ({subscription.status}).")

    url = portal_url(account=account, return_url=f"{args.base_url}/billing")
    print(f"3. Open the customer portal and cancel the subscription (immediately, or at the "
          f"period's end):\n   {url}")
    _wait(args.timeout, "the cancellation to arrive (deleted, or updated with "
          "cancel_at_period_end)",
          lambda: Subscription.objects.filter(account=account).filter(
              status=Subscription.Status.CANCELED).exists()
          or Subscription.objects.filter(account=account, cancel_at_period_end=True).exists())
    print("4. Events this run stored (a retried one shows attempts > 1):")
    for event in StripeEvent.objects.filter(created__gte=_aware(started)).order_by("created"):
        print(f"   {event.created:%H:%M:%S} {event.type:<36} attempts={event.attempts} "
              f"{event.outcome or event.last_error}")
    print("Done: Checkout, Price, portal and signed deliveries all worked in test mode.")
    return 0


def _handled(model, event_type: str, since: float) -> bool:
    return model.objects.filter(type=event_type, created__gte=_aware(since - 60),
                                handled_at__isnull=False).exists()


def _aware(seconds: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC)


def _wait(timeout: int, what: str, check) -> None:
    deadline = time.monotonic() + timeout
    print(f"   waiting for {what} ...")
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {timeout}s waiting for {what}: see "
                             "`echo-memory manage billing_events`")
        time.sleep(2)


if __name__ == "__main__":
    sys.exit(main())
