"""Operators edit plans here; subscriptions, the ledger and Stripe's events are read-only
(Stripe's webhooks and the charges write them, and a hand edit would unbalance the ledger)."""

from __future__ import annotations

from django.contrib import admin

from billing.models import Plan, StripeEvent, Subscription, UsagePeriod, UsageRecord


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "monthly_units", "requests_per_minute", "price_cents",
                    "stripe_price_id", "is_default", "position"]
    list_editable = ["position"]
    ordering = ["position"]


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Subscription)
class SubscriptionAdmin(ReadOnly):
    list_display = ["account", "plan", "status", "grace_until", "current_period_end",
                    "stripe_customer_id", "updated_at"]
    list_filter = ["status", "plan"]
    search_fields = ["account__name", "stripe_customer_id", "stripe_subscription_id"]


@admin.register(UsagePeriod)
class UsagePeriodAdmin(ReadOnly):
    list_display = ["account_id", "month", "units", "alerted_80_at", "alerted_100_at"]
    list_filter = ["month"]


@admin.register(UsageRecord)
class UsageRecordAdmin(ReadOnly):
    list_display = ["at", "account_id", "key_prefix", "memory_name", "tool", "units"]
    list_filter = ["tool", "month"]


@admin.register(StripeEvent)
class StripeEventAdmin(ReadOnly):
    list_display = ["id", "type", "created", "received_at", "handled_at", "attempts",
                    "outcome"]
    list_filter = ["type"]
    search_fields = ["id", "outcome", "last_error"]
