"""The starting plans survive a flush, and an operator's edits survive a migrate."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal

from billing.models import Plan
from billing.plans import STARTING_PLANS


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_gets_the_starting_plans_back():
    call_command("flush", interactive=False, verbosity=0)
    assert sorted(Plan.objects.values_list("slug", flat=True)) == sorted(
        slug for slug, *_ in STARTING_PLANS)
    assert Plan.objects.get(is_default=True).slug == "free"


@pytest.mark.django_db
def test_a_plan_the_operator_deleted_stays_deleted_after_a_migrate():
    deleted = Plan.objects.exclude(is_default=True).order_by("position").first()
    deleted.delete()
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default", apps=apps)
    assert not Plan.objects.filter(slug=deleted.slug).exists()
    assert Plan.objects.count() == len(STARTING_PLANS) - 1
