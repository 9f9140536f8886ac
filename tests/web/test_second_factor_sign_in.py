"""Signing in with a second factor: the password step leaves a person with a factor at the
second step, which every page but sign-out sends them back to (`next` kept through both
steps); a code from the app or a recovery code (once) finishes it; keys at /api are not
sessions and pass. Without a factor, sign-in is what it always was. The admin site asks
for the factor too."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts import second_factors as factors
from tests.second_factor_codes import app_code

SECOND = "/login/second-factor/"


def app_on(user) -> tuple[str, list[str]]:
    setup = factors.totp_begin(user=user)
    return setup.secret, factors.totp_confirm(user=user, code=app_code(setup.secret))[1]


def sign_in(client, username: str, *, next_: str = "") -> object:
    return client.post("/login/" + (f"?next={next_}" if next_ else ""),
                       {"username": username, "password": "pw-" + username,
                        "next": next_})


def test_without_a_factor_sign_in_is_as_before(client, alice):
    answer = sign_in(client, "alice")
    assert answer.status_code == 302 and answer["Location"] == "/dashboard/"
    assert client.get("/dashboard/").status_code == 200


def test_with_the_app_every_page_waits_for_the_code_and_next_survives(client, alice):
    app_on(alice.user)
    answer = sign_in(client, "alice", next_="/audit/")
    assert answer.status_code == 302 and answer["Location"] == "/audit/"
    for path in ("/audit/", "/dashboard/", "/account/", "/account/security/", "/admin/",
                 "/memories/default/"):
        held = client.get(path)
        assert held.status_code == 302, path
        assert held["Location"].startswith(SECOND), path
    assert client.get("/audit/")["Location"] == f"{SECOND}?next=%2Faudit%2F"
    page = client.get(SECOND, {"next": "/audit/"}).content.decode()
    assert 'name="code"' in page and 'value="/audit/"' in page and "recovery code" in page
    # A key is not a session: the API answers as ever.
    api = client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {alice.plaintext}")
    assert api.status_code == 200
    wrong = client.post(SECOND, {"code": "12345", "next": "/audit/"})
    assert wrong.status_code == 200
    assert "that code does not match" in wrong.content.decode()
    assert 'class="form-control is-invalid"' in wrong.content.decode()


def test_the_right_code_finishes_sign_in_and_goes_to_next(client, alice):
    secret, _ = app_on(alice.user)
    sign_in(client, "alice")
    done = client.post(SECOND, {"code": app_code(secret, steps_ahead=1), "next": "/audit/"})
    assert done.status_code == 302 and done["Location"] == "/audit/"
    assert client.get("/audit/").status_code == 200
    assert client.get(SECOND)["Location"] == "/dashboard/"  # nothing owed any more


def test_a_recovery_code_signs_in_once(client, alice):
    _, codes = app_on(alice.user)
    sign_in(client, "alice")
    assert client.post(SECOND, {"code": codes[3]})["Location"] == "/dashboard/"
    client.post("/logout/")
    sign_in(client, "alice")
    reused = client.post(SECOND, {"code": codes[3]})
    assert reused.status_code == 200 and "that code does not match" in reused.content.decode()
    assert client.get("/dashboard/")["Location"].startswith(SECOND)


@pytest.mark.parametrize("code, says", [
    ("", "Type the 6-digit code"),
    ("12\x0034", "Null characters are not allowed"),
    ("9" * 10_000, "That is not a code"),
    ("abc;def", "that is not a code"),
])
def test_hostile_codes_are_refused_by_field(client, alice, code, says):
    app_on(alice.user)
    sign_in(client, "alice")
    answer = client.post(SECOND, {"code": code})
    assert answer.status_code == 200 and says in answer.content.decode()


@pytest.mark.parametrize("next_", ["https://evil.example/", "//evil.example/", "bad\x00name",
                                   "/x\r\nSet-Cookie: a=b", SECOND])
def test_a_next_off_the_site_goes_to_the_dashboard(client, alice, next_):
    secret, _ = app_on(alice.user)
    sign_in(client, "alice")
    done = client.post(SECOND, {"code": app_code(secret, steps_ahead=1), "next": next_})
    assert done.status_code == 302 and done["Location"] == "/dashboard/"


def test_sign_out_is_open_during_the_second_step(client, alice):
    app_on(alice.user)
    sign_in(client, "alice")
    assert client.post("/logout/").status_code == 302
    assert client.get("/dashboard/")["Location"].startswith("/login/")


def test_the_second_step_needs_the_password_first(client, db):
    assert client.get(SECOND)["Location"].startswith("/login/")


def _staff(user):
    user.is_staff = user.is_superuser = True
    user.save()


def test_the_admin_asks_a_staff_member_with_a_factor_for_the_code(client, alice):
    _staff(alice.user)
    secret, _ = app_on(alice.user)
    password_only = client.post("/admin/login/", {"username": "alice",
                                                  "password": "pw-alice"})
    assert password_only.status_code == 200
    assert client.get("/admin/").status_code == 302
    signed_in = client.post("/admin/login/?next=/admin/", {
        "username": "alice", "password": "pw-alice",
        "otp_token": app_code(secret, steps_ahead=1), "next": "/admin/"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_the_admin_after_the_sites_password_step_waits_for_the_code(client, alice):
    _staff(alice.user)
    secret, _ = app_on(alice.user)
    sign_in(client, "alice")
    assert client.get("/admin/")["Location"] == f"{SECOND}?next=%2Fadmin%2F"
    done = client.post(SECOND, {"code": app_code(secret, steps_ahead=1), "next": "/admin/"})
    assert done["Location"] == "/admin/" and client.get("/admin/").status_code == 200


def test_the_admin_without_a_factor_is_as_before(client, db):
    get_user_model().objects.create_superuser("root", "root@example.com", "pw-root")
    signed_in = client.post("/admin/login/", {"username": "root", "password": "pw-root"})
    assert signed_in.status_code == 302
    assert client.get("/admin/").status_code == 200


def test_a_password_reset_does_not_skip_the_second_factor(client, db):
    import re

    from django.core import mail

    client.post("/signup/", {"email": "ada@example.com", "password": "a long passphrase 42"})
    ada = get_user_model().objects.get(username="ada@example.com")
    app_on(ada)
    mail.outbox.clear()
    client.post("/password-reset/", {"email": "ada@example.com"})
    path = re.search(r"http://testserver(/password-reset/[^/\s]+/[^/\s]+/)",
                     mail.outbox[0].body)[1]
    set_url = client.get(path, follow=True).redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": "another passphrase 9",
                                 "new_password2": "another passphrase 9"})
    assert done.status_code == 302
    assert client.get("/dashboard/")["Location"] == f"{SECOND}?next=%2Fdashboard%2F"
