"""web.access.member: what a page checks, in the order the pages have always checked it:
sign-in, the method, membership, the role."""

from __future__ import annotations

from accounts.principal import principal_for_member
from accounts.team import account_leave
from memories.catalog.new_accounts import another_account_create
from tests.factories import make_user
from web.access import CURRENT_ACCOUNT


def test_signed_out_is_sent_to_sign_in_before_anything_else(client, db):
    page = client.put("/audit/")
    assert page.status_code == 302 and page["Location"].startswith("/login/?next=")


def test_a_wrong_method_is_a_405_before_membership_is_looked_up(client, db):
    client.force_login(make_user("lonely"))
    assert client.put("/audit/").status_code == 405
    assert client.get("/audit/").status_code == 404
    assert "not in any account yet" in client.get("/dashboard/").content.decode()


def test_the_role_is_checked_after_the_method_and_says_who_may(client, bob):
    client.force_login(bob.user)
    assert client.put("/account/delete/").status_code == 405
    refused = client.get("/account/delete/")
    assert refused.status_code == 403
    assert "Only an owner of the account may delete it" in refused.content.decode()


def test_a_membership_that_ended_falls_back_to_the_first_account(client, alice, bob):
    mine = another_account_create(user=bob.user, name="Bob's own")
    client.force_login(bob.user)
    session = client.session
    session[CURRENT_ACCOUNT] = alice.account.pk
    session.save()
    account_leave(principal=principal_for_member(bob.user, alice.account.pk)[0])

    page = client.get("/account/")

    assert page.status_code == 200 and page.context["account"].pk == mine.pk
    assert CURRENT_ACCOUNT not in client.session
