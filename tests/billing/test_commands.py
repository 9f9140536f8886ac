import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from billing.models import Plan

pytestmark = pytest.mark.django_db


def test_billing_plans_lists_every_plan_with_its_stripe_price(capsys):
    call_command("billing_plans")
    out = capsys.readouterr().out
    assert "free" in out and "(default)" in out
    assert out.count("(not for sale)") == 3


def test_billing_plans_sets_a_price_id(capsys):
    call_command("billing_plans", "--set-price", "pro", "price_123")
    assert Plan.objects.get(slug="pro").stripe_price_id == "price_123"
    assert "pro: Stripe price price_123" in capsys.readouterr().out


def test_billing_plans_refuses_what_would_break_billing():
    with pytest.raises(CommandError, match="no plan has the slug 'gold'"):
        call_command("billing_plans", "--set-price", "gold", "price_1")
    with pytest.raises(CommandError, match="default plan"):
        call_command("billing_plans", "--set-price", "free", "price_1")
    call_command("billing_plans", "--set-price", "pro", "price_1")
    with pytest.raises(CommandError, match="already has the Stripe price"):
        call_command("billing_plans", "--set-price", "team", "price_1")


def test_retrying_an_unknown_event_says_so():
    with pytest.raises(CommandError, match="no stored Stripe event"):
        call_command("billing_events", "--retry", "evt_nope")
