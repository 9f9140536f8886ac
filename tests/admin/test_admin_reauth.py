"""The admin site's changes are sensitive actions, as the site's own are: a session whose
last check of its person is stale confirms it's them before any POST goes through, and
nothing is changed meanwhile; reading pages and signing out are never held up."""

from __future__ import annotations

import time

from accounts import reauth
from accounts.models import ApiKey


def _stale(client) -> None:
    session = client.session
    session[reauth.IDENTITY_CHECKED_AT] = int(time.time()) - 3600
    session.save()


def test_a_stale_session_confirms_before_the_admin_changes_anything(staff_client, alice):
    form = {"account": alice.account.pk, "holder": alice.user.pk, "name": "ci",
            "tool": "github-actions", "default_memory": ""}
    keys_before = ApiKey.objects.count()
    _stale(staff_client)
    assert staff_client.get("/admin/accounts/apikey/").status_code == 200
    held = staff_client.post("/admin/accounts/apikey/add/", form)
    assert held.status_code == 302
    assert held["Location"] == "/confirm/?next=%2Fadmin%2Faccounts%2Fapikey%2Fadd%2F"
    assert ApiKey.objects.count() == keys_before

    confirmed = staff_client.post("/confirm/", {"password": "pw-alice",
                                                "next": "/admin/accounts/apikey/add/"})
    assert confirmed["Location"] == "/admin/accounts/apikey/add/"
    made = staff_client.post("/admin/accounts/apikey/add/", form)
    assert made.status_code == 302 and ApiKey.objects.count() == keys_before + 1


def test_signing_out_of_the_admin_is_never_held_up(staff_client):
    _stale(staff_client)
    signed_out = staff_client.post("/admin/logout/")
    assert signed_out.status_code == 302 and signed_out["Location"] == "/login/"
    assert staff_client.get("/admin/")["Location"].startswith("/admin/login/")
