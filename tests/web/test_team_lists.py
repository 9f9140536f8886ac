"""The team page shows members and invitations 25 at a time, in the same number of queries
for a few members as for many."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Membership
from tests.factories import make_user


def _join(account, first: int, count: int) -> None:
    for n in range(first, first + count):
        Membership.objects.create(user=make_user(f"person-{n:02d}"), account=account)


def test_members_are_paged_in_a_constant_number_of_queries(client, alice):
    _join(alice.account, 0, 3)
    client.force_login(alice.user)

    def team_page(**query):
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/team/", query)
        return len(queries), response

    few, response = team_page()
    assert len(response.context["members"]) == 4
    _join(alice.account, 3, 40)
    many, response = team_page()
    assert len(response.context["members"]) == 25
    assert many == few
    assert "Members: page 1 of 2" in response.content.decode()
    _, second = team_page(members=2)
    assert len(second.context["members"]) == 19


def test_the_only_owner_is_not_offered_to_leave_and_a_second_owner_is(client, alice, bob):
    client.force_login(alice.user)
    page = client.get("/team/").content.decode()
    assert "Leave this account" not in page and "the only owner" in page
    Membership.objects.filter(user=bob.user).update(role=Membership.Role.OWNER)
    assert "Leave this account" in client.get("/team/").content.decode()
