"""Sign-up, sign-in and the dashboard, as pages: what they create and whom they show."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.models import Account, Membership
from memories.models import Memory
from tests.factories import make_user


def test_signing_up_creates_the_user_an_owned_account_and_its_default_memory(client, db):
    reply = client.post("/signup/", {"email": "Ada@Example.com",
                                     "password": "a long passphrase 42"})
    assert reply.status_code == 302 and reply["Location"] == "/signup/sent/"
    sent = client.get("/signup/sent/").content.decode()
    assert "Check your email" in sent and "ada@example.com" in sent and 'href="/login/"' in sent
    user = get_user_model().objects.get(username="ada@example.com")
    membership = Membership.objects.get(user=user)
    assert membership.role == Membership.Role.OWNER
    assert list(Memory.objects.filter(account=membership.account)
                .values_list("name", flat=True)) == ["default"]
    assert client.get("/dashboard/").status_code == 302  # sign-up signs nobody in
    client.post("/login/", {"username": "ada@example.com", "password": "a long passphrase 42"})
    page = client.get("/dashboard/")
    assert page.status_code == 200
    assert b"default" in page.content and b"owner" in page.content


@pytest.mark.parametrize(("data", "field", "says"), [
    ({"email": "not-an-email", "password": "a long passphrase 42"}, "email", "valid email"),
    ({"email": "ada@example.com", "password": "short"}, "password", "too short"),
    ({"email": "ada@example.com", "password": "12345678901"}, "password", "entirely numeric"),
])
def test_a_bad_sign_up_names_the_field_and_creates_nothing(client, db, data, field, says):
    reply = client.post("/signup/", data)
    assert reply.status_code == 200  # the form again, errors by their fields
    assert says in " ".join(reply.context["form"].errors[field])
    assert b"is-invalid" in reply.content
    assert not get_user_model().objects.exists() and not Account.objects.exists()


def test_sign_up_is_closed_when_the_setting_says_so(client, db, settings):
    settings.OPEN_SIGNUP = False
    assert client.get("/signup/").status_code == 404
    assert client.post("/signup/", {"email": "a@b.co", "password": "a long passphrase 42"}
                       ).status_code == 404
    assert not get_user_model().objects.exists()


def test_the_dashboard_needs_a_sign_in_and_shows_only_the_members_account(client, alice,
                                                                          charlie):
    assert client.get("/dashboard/")["Location"].startswith("/login/?next=/dashboard/")
    client.force_login(charlie.user)
    page = client.get("/dashboard/").content.decode()
    assert "Charlie&#x27;s shop" in page and "Alice" not in page
    assert f"em_{charlie.key.prefix}_" in page and f"em_{alice.key.prefix}_" not in page


def test_a_member_sees_only_their_own_keys(client, alice, bob):
    client.force_login(bob.user)
    page = client.get("/dashboard/").content.decode()
    assert f"em_{bob.key.prefix}_" in page and f"em_{alice.key.prefix}_" not in page
    client.force_login(alice.user)
    page = client.get("/dashboard/").content.decode()
    assert f"em_{bob.key.prefix}_" in page and f"em_{alice.key.prefix}_" in page


def test_people_sign_in_with_their_email_in_any_case(client, db):
    client.post("/signup/", {"email": "ada@example.com", "password": "a long passphrase 42"})
    client.logout()
    page = client.get("/login/").content.decode()
    assert '<label class="form-label" for="id_username">Email</label>' in page
    signed_in = client.post("/login/", {"username": "Ada@Example.COM",
                                        "password": "a long passphrase 42"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/dashboard/"


def test_a_person_in_no_account_is_told_what_to_do_not_given_an_error(client, db):
    lonely = make_user("lonely", password="pw-lonely-123")
    client.force_login(lonely)
    page = client.get("/dashboard/")
    assert page.status_code == 200
    assert "not in any account yet" in page.content.decode()
    assert client.get("/keys/new/").status_code == 404
    assert client.get("/memories/new/").status_code == 404
