"""A text value PostgreSQL cannot hold (NUL, a lone surrogate) matches no row in a lookup,
on every text field, ours and Django's: it used to fail the request (echomem/postgres/
text_lookups.py). Writes are not silently accepted: they still fail, and every edge
refuses such values by name before writing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import DataError, transaction
from django.db.models import Q

from accounts.models import Account
from billing.models import StripeEvent

pytestmark = pytest.mark.django_db
UNSTORABLE = ["alice\x00", "\x00", "a\ud800b"]


@pytest.mark.parametrize("value", UNSTORABLE, ids=["NUL", "only NUL", "lone surrogate"])
def test_a_lookup_for_an_unstorable_value_matches_nothing(alice, value):
    users = get_user_model().objects
    for lookup in ("exact", "iexact", "contains", "icontains", "startswith", "istartswith",
                   "endswith", "iendswith"):
        assert not users.filter(**{f"username__{lookup}": value}).exists(), lookup
        assert users.exclude(**{f"username__{lookup}": value}).count() == users.count()
    assert list(users.filter(username__in=[value, "alice"]).values_list("username",
                                                                          flat=True)) == ["alice"]
    assert not users.filter(username__in=[value]).exists()
    assert list(users.filter(Q(username=value) | Q(username="alice"))) == [alice.user]
    with pytest.raises(StripeEvent.DoesNotExist):
        StripeEvent.objects.get(pk=value)
    assert not Account.objects.filter(name__icontains=value).exists()


def test_writing_an_unstorable_value_still_fails_rather_than_storing_something_else(db):
    with pytest.raises((DataError, UnicodeEncodeError)), transaction.atomic():
        Account.objects.create(name="bad\x00name")
    assert not Account.objects.exists()
