"""Plans, each account's subscription, and the usage ledger.

The ledger outlives what it counts: usage rows keep the ids and names of their
account, key and memory without foreign-key constraints, so deleting a memory (or
the whole account) never deletes the record of units already used and billed.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class Plan(models.Model):
    """What an account may use each month; rows, so a new plan needs no deploy."""

    slug = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=60)
    monthly_units = models.PositiveBigIntegerField(
        help_text="Facts written plus facts returned per calendar month (UTC).")
    requests_per_minute = models.PositiveIntegerField(
        default=240, help_text="Each key's rolling-minute request limit on /mcp and /api/v1.")
    price_cents = models.PositiveIntegerField(
        default=0, help_text="Shown on the billing page; Stripe's price is what is charged.")
    stripe_price_id = models.CharField(
        max_length=255, blank=True,
        help_text="The Stripe Price (or legacy Plan) id Checkout subscribes to; blank: not "
                  "for sale.")
    is_default = models.BooleanField(
        default=False, help_text="The plan of every account without a paid subscription.")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "monthly_units"]
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True),
                                    name="one_default_plan"),
            models.UniqueConstraint(fields=["stripe_price_id"], condition=~Q(stripe_price_id=""),
                                    name="one_plan_per_stripe_price"),
        ]

    def __str__(self) -> str:
        return self.name


class Subscription(models.Model):
    """An account's paid plan as Stripe last told us; no row means the default plan."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        TRIALING = "trialing"
        PAST_DUE = "past_due"
        CANCELED = "canceled"
        INCOMPLETE = "incomplete"
        UNPAID = "unpaid"

    account = models.OneToOneField("accounts.Account", on_delete=models.CASCADE,
                                   related_name="subscription")
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    stripe_customer_id = models.CharField(max_length=255, blank=True)
    stripe_subscription_id = models.CharField(max_length=255, blank=True)
    current_period_end = models.DateTimeField(null=True, blank=True)
    cancel_at_period_end = models.BooleanField(default=False)
    # A failed payment keeps the plan until then; after it, the account is on the default plan.
    grace_until = models.DateTimeField(null=True, blank=True)
    # When Stripe created the newest event applied here: an older event arriving late
    # (Stripe does not promise order) changes nothing.
    stripe_state_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stripe_customer_id"],
                                    condition=~Q(stripe_customer_id=""),
                                    name="one_account_per_stripe_customer"),
        ]

    def __str__(self) -> str:
        return f"{self.account_id}: {self.plan} ({self.status})"


class UsagePeriod(models.Model):
    """Units an account used in one calendar month (UTC): the sum of its UsageRecords.

    The row is the lock every charge of the account takes, so the check against the
    allowance and the increment are one step however many calls race.
    """

    account = models.ForeignKey("accounts.Account", on_delete=models.DO_NOTHING,
                                db_constraint=False, related_name="+")
    month = models.DateField(help_text="The first day of the month.")
    units = models.PositiveBigIntegerField(default=0)
    alerted_80_at = models.DateTimeField(null=True, blank=True)
    alerted_100_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "month"], name="one_period_per_month"),
        ]


class UsageRecord(models.Model):
    """One call that cost units: who, where, which tool, how many, when."""

    account = models.ForeignKey("accounts.Account", on_delete=models.DO_NOTHING,
                                db_constraint=False, related_name="+")
    month = models.DateField()
    at = models.DateTimeField()
    key = models.ForeignKey("accounts.ApiKey", null=True, on_delete=models.DO_NOTHING,
                            db_constraint=False, related_name="+")
    key_prefix = models.CharField(max_length=16, blank=True)
    memory = models.ForeignKey("memories.Memory", null=True, on_delete=models.DO_NOTHING,
                               db_constraint=False, related_name="+")
    memory_name = models.CharField(max_length=64)
    tool = models.CharField(max_length=64)
    units = models.PositiveIntegerField()

    class Meta:
        indexes = [models.Index(fields=["account", "month", "at"], name="usage_by_account_month")]


class StripeEvent(models.Model):
    """Every webhook event, stored by Stripe's id before it is handled: a replay finds the
    row and does nothing; a failure stays here with its error until a retry succeeds."""

    id = models.CharField(max_length=255, primary_key=True)
    type = models.CharField(max_length=100)
    created = models.DateTimeField(help_text="When Stripe created the event.")
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    handled_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    outcome = models.CharField(max_length=200, blank=True,
                               help_text="What handling did, e.g. 'plan pro' or 'ignored'.")

    class Meta:
        indexes = [models.Index(fields=["handled_at"], name="stripe_event_unhandled",
                                condition=Q(handled_at__isnull=True))]
