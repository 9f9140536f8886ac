"""The usage selectors behind the billing page, the banner and GET /api/v1/usage: real
ledger rows in, zero-filled figures out, one query each, never another account's units."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from accounts.services import api_key_revoke
from billing.ledger import allowance
from billing.models import Plan, Subscription, UsagePeriod, UsageRecord
from billing.plans import month_of
from billing.usage import (
    daily_units,
    monthly_units,
    standing,
    units_by_key,
    units_by_memory,
    units_by_tool,
    usage_report,
    usage_summary,
)
from memories.erasure.services import memory_delete
from memories.graph.services import memory_create
from memories.models import Memory
from tests.billing.usage_rows import charge, plan, record

MID_MARCH = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
MARCH = date(2026, 3, 1)


def test_daily_units_are_every_day_up_to_today_zero_filled(alice, charlie):
    record(alice, 3, datetime(2026, 3, 2, 9, tzinfo=UTC))
    record(alice, 4, datetime(2026, 3, 2, 23, 59, tzinfo=UTC))
    record(alice, 5, datetime(2026, 3, 15, 0, 1, tzinfo=UTC))
    record(alice, 8, datetime(2026, 2, 28, 23, 59, tzinfo=UTC))  # February's
    record(charlie, 100, datetime(2026, 3, 3, tzinfo=UTC))
    days = daily_units(alice.account.pk, MARCH, now=MID_MARCH)
    assert [d.start for d in days] == [MARCH + timedelta(days=n) for n in range(15)]
    assert {d.start.day: d.units for d in days if d.units} == {2: 7, 15: 5}
    past = daily_units(alice.account.pk, date(2026, 2, 1), now=MID_MARCH)
    assert len(past) == 28 and past[-1].units == 8


def test_monthly_units_are_the_last_twelve_months_from_the_ledger(alice, charlie):
    record(alice, 6, datetime(2025, 3, 31, 23, tzinfo=UTC))  # thirteen months back: left out
    record(alice, 2, datetime(2025, 4, 1, tzinfo=UTC))
    record(alice, 5, datetime(2026, 3, 1, tzinfo=UTC))
    record(alice, 1, datetime(2026, 3, 14, tzinfo=UTC))
    record(charlie, 50, datetime(2026, 1, 5, tzinfo=UTC))
    months = monthly_units(alice.account.pk, now=MID_MARCH)
    assert len(months) == 12
    assert months[0].start == date(2025, 4, 1) and months[-1].start == MARCH
    assert [m.units for m in months] == [2] + [0] * 10 + [6]
    # The ledger's month row is the sum of its records.
    assert sum(r.units for r in UsageRecord.objects.filter(account=alice.account,
                                                           month=MARCH)) == 6


def test_charges_through_the_ledger_show_up_today(alice):
    charge(alice, 3)
    charge(alice, 2, tool="query_memory")
    today = daily_units(alice.account.pk, month_of())
    assert today[-1].start == datetime.now(UTC).date() and today[-1].units == 5
    assert [(s.name, s.units, s.percent) for s in units_by_tool(alice.account.pk, month_of())] \
        == [("write_episode", 3, 60), ("query_memory", 2, 40)]
    assert standing(alice.account.pk).used == 5


def test_units_by_memory_follow_renames_and_mark_deleted_memories(alice, charlie):
    memory_create(account_id=alice.account.pk, name="scratch")
    memory_create(account_id=alice.account.pk, name="notes")
    charge(alice, 2, memory="notes")
    Memory.objects.filter(account=alice.account, name="notes").update(name="journal")
    charge(alice, 3, memory="journal")
    charge(alice, 4, memory="scratch")
    charge(alice, 1)
    charge(charlie, 9)
    memory_delete(alice.principal, "scratch", confirm="scratch")
    shares = units_by_memory(alice.account.pk, month_of())
    assert [(s.name, s.units, s.state) for s in shares] == [
        ("journal", 5, "active"), ("scratch", 4, "deleted"), ("default", 1, "active")]
    assert [s.percent for s in shares] == [50, 40, 10]


def test_units_by_key_name_each_key_and_mark_revoked_and_deleted_ones(alice, bob, charlie):
    charge(alice, 5)
    charge(bob, 2)
    charge(charlie, 7)
    api_key_revoke(key=bob.key)
    UsageRecord.objects.create(account=alice.account, month=month_of(), at=datetime.now(UTC),
                               key_id=987654, key_prefix="gone1234", memory_name="default",
                               tool="query_memory", units=1)
    shares = units_by_key(alice.account.pk, month_of())
    assert [(s.name, s.prefix, s.units, s.state, s.detail) for s in shares] == [
        ("laptop", f"em_{alice.key.prefix}_…", 5, "active", "claude-code"),
        ("bot", f"em_{bob.key.prefix}_…", 2, "revoked", "support-bot"),
        ("em_gone1234_…", "em_gone1234_…", 1, "deleted", ""),
    ]


@pytest.mark.parametrize("status, grace_days, expected", [
    (None, None, "free"),
    (Subscription.Status.ACTIVE, None, "pro"),
    (Subscription.Status.PAST_DUE, 3, "pro"),
    (Subscription.Status.PAST_DUE, -1, "free"),
    (Subscription.Status.CANCELED, None, "free"),
])
def test_standing_is_the_ledgers_allowance_in_one_query(alice, status, grace_days, expected,
                                                        django_assert_num_queries):
    if status is not None:
        Subscription.objects.create(
            account=alice.account, plan=plan("pro"), status=status,
            grace_until=None if grace_days is None
            else datetime.now(UTC) + timedelta(days=grace_days))
    charge(alice, 4)
    with django_assert_num_queries(1):
        current = standing(alice.account.pk)
    reference = allowance(alice.account.pk)
    assert current.plan.slug == reference.plan.slug == expected
    assert (current.used, current.allowed, current.remaining, current.resets_at) == (
        reference.used, reference.allowed, reference.remaining, reference.resets_at)


def test_standing_levels_match_the_alert_lines(alice):
    free = plan("free")
    UsagePeriod.objects.create(account=alice.account, month=month_of(),
                               units=free.monthly_units * 79 // 100)
    assert standing(alice.account.pk).level is None
    UsagePeriod.objects.filter(account=alice.account).update(units=free.monthly_units * 8 // 10)
    assert standing(alice.account.pk).level == 80
    UsagePeriod.objects.filter(account=alice.account).update(units=free.monthly_units)
    full = standing(alice.account.pk)
    assert (full.level, full.percent, full.remaining) == (100, 100, 0)


def test_summary_has_the_headline_figures(alice):
    charge(alice, 250)
    summary = usage_summary(alice.account.pk)
    assert summary == {
        "metered": True, "plan": "free", "plan_name": "Free", "month": month_of(),
        "used": 250, "allowed": 10_000, "remaining": 9_750, "percent": 2,
        "resets_at": standing(alice.account.pk).resets_at, "requests_per_minute": 240}


def test_a_self_hosted_box_reports_nothing_metered(alice, settings):
    charge(alice, 3)
    settings.SELF_HOSTED = True
    report = usage_report(alice.account.pk)
    assert report.metered is False and report.standing is None
    assert report.daily == report.monthly == report.by_key == report.by_memory == []
    assert usage_summary(alice.account.pk)["used"] is None


def test_standing_seeds_the_plans_when_the_table_was_emptied(alice):
    Plan.objects.all().delete()
    current = standing(alice.account.pk)
    assert current.plan.slug == "free" and Plan.objects.count() == 3
