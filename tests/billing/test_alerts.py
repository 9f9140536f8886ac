"""Usage alerts: one email at 80% and one at 100% of the month's allowance, to owners and
admins, whatever number of calls cross the line."""

from __future__ import annotations

import pytest
from django.core import mail

from accounts.models import Membership
from billing.models import Plan, UsagePeriod
from echomem.errors import AllowanceExhausted
from tests.billing.test_allowance import facts
from tests.factories import make_user
from tools.calling import call_tool
from tools.registry import TOOLS


def write(principal, *pairs):
    return call_tool(principal, TOOLS["write_episode"], facts(*pairs) | {"assume_new": True})


def test_each_threshold_mails_owners_and_admins_once_a_month(
        alice, bob, django_capture_on_commit_callbacks):
    alice.user.email = "alice@example.com"
    alice.user.save()
    admin = make_user("dana")
    admin.email = "dana@example.com"
    admin.save()
    Membership.objects.create(user=admin, account=alice.account, role=Membership.Role.ADMIN)
    bob.user.email = "bob@example.com"  # a member: not mailed
    bob.user.save()
    Plan.objects.filter(is_default=True).update(monthly_units=10)

    with django_capture_on_commit_callbacks(execute=True):
        write(alice.principal, ("a1", "b1"), ("b1", "c1"), ("c1", "d1"), ("d1", "e1"),
              ("e1", "f1"), ("f1", "g1"), ("g1", "h1"))  # 7 of 10: no alert
    assert mail.outbox == []
    with django_capture_on_commit_callbacks(execute=True):
        write(alice.principal, ("p1", "q1"))  # 8 of 10: 80%
        write(alice.principal, ("r1", "s1"))  # 9 of 10: still 80%, already sent
    assert [m.subject for m in mail.outbox] == [
        "Echo Memory: Alice's team has used 80% of this month's units"]
    assert sorted(mail.outbox[0].to) == ["alice@example.com", "dana@example.com"]
    assert "8 of its 10 units" in mail.outbox[0].body and "/billing" in mail.outbox[0].body
    with django_capture_on_commit_callbacks(execute=True):
        write(alice.principal, ("t1", "u1"))  # 10 of 10
    assert mail.outbox[-1].subject == (
        "Echo Memory: Alice's team has used all of this month's units")
    assert len(mail.outbox) == 2
    period = UsagePeriod.objects.get(account_id=alice.account.pk)
    assert period.alerted_80_at and period.alerted_100_at


def test_a_refused_write_sends_nothing(alice, django_capture_on_commit_callbacks):
    alice.user.email = "alice@example.com"
    alice.user.save()
    Plan.objects.filter(is_default=True).update(monthly_units=1)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(AllowanceExhausted):
        write(alice.principal, ("a1", "b1"), ("b1", "c1"))
    assert mail.outbox == []
    assert not UsagePeriod.objects.filter(account_id=alice.account.pk, units__gt=0).exists()
