from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction

from billing.models import Plan


class Command(BaseCommand):
    help = ("List the plans (units, rate, price, Stripe price id); --set-price SLUG PRICE_ID "
            "sets the Stripe Price Checkout subscribes to for that plan ('' makes it not for "
            "sale).")

    def add_arguments(self, parser):
        parser.add_argument("--set-price", nargs=2, metavar=("SLUG", "PRICE_ID"))

    def handle(self, *args, set_price: list[str] | None, **options):
        if set_price:
            slug, price_id = set_price
            plan = Plan.objects.filter(slug=slug).first()
            if plan is None:
                known = ", ".join(Plan.objects.values_list("slug", flat=True))
                raise CommandError(f"no plan has the slug {slug!r} (plans: {known})")
            if plan.is_default and price_id:
                raise CommandError(f"{slug} is the default plan every account has without "
                                   "paying: it is not sold through Stripe")
            plan.stripe_price_id = price_id.strip()
            try:
                with transaction.atomic():
                    plan.save(update_fields=["stripe_price_id"])
            except IntegrityError:
                raise CommandError(f"another plan already has the Stripe price {price_id!r}") \
                    from None
            self.stdout.write(f"{plan.slug}: Stripe price {plan.stripe_price_id or '(none)'}")
            return
        for plan in Plan.objects.all():
            default = "  (default)" if plan.is_default else ""
            self.stdout.write(
                f"{plan.slug:<10} {plan.name:<12} {plan.monthly_units:>12,} units/month  "
                f"{plan.requests_per_minute:>5}/min  ${plan.price_cents / 100:,.2f}  "
                f"{plan.stripe_price_id or '(not for sale)'}{default}")
