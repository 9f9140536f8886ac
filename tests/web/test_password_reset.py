"""Password reset: the mailed link (found by email in any case) sets a password, signs the
person in and works once; quickstart's sign-in link is the same kind of link."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.core import mail

from web.password_reset import sign_in_link

LINK = re.compile(r"http://testserver(/password-reset/[^/\s]+/[^/\s]+/)")


def signed_up(client, email="ada@example.com"):
    client.post("/signup/", {"email": email, "password": "a long passphrase 42"})
    mail.outbox.clear()  # the sign-up's own welcome
    return get_user_model().objects.get(username=email)


def test_the_sign_in_page_links_to_the_reset(client, db):
    page = client.get("/login/")
    assert b'href="/password-reset/"' in page.content and b"Forgot your password?" in page.content


def test_the_link_found_by_email_in_any_case_sets_the_password_and_signs_in(client, db):
    ada = signed_up(client)
    sent = client.post("/password-reset/", {"email": "  ADA@Example.COM "})
    assert sent.status_code == 302 and sent["Location"] == "/password-reset/sent/"
    assert b"Check your email" in client.get(sent["Location"]).content
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ada@example.com"]
    path = LINK.search(mail.outbox[0].body)[1]

    form_page = client.get(path, follow=True)
    assert form_page.status_code == 200 and b"Set a new password" in form_page.content
    set_url = form_page.redirect_chain[-1][0]
    mismatch = client.post(set_url, {"new_password1": "another passphrase 9",
                                     "new_password2": "different passphrase 9"})
    assert mismatch.status_code == 200
    assert "match" in " ".join(mismatch.context["form"].errors["new_password2"])
    done = client.post(set_url, {"new_password1": "another passphrase 9",
                                 "new_password2": "another passphrase 9"}, follow=True)
    assert done.redirect_chain[-1][0] == "/dashboard/"
    assert b"Your password is set and you are signed in." in done.content
    ada.refresh_from_db()
    assert ada.check_password("another passphrase 9")

    client.logout()
    used = client.get(path)
    assert used.status_code == 404 and b"not valid" in used.content
    assert b'href="/password-reset/"' in used.content  # with a way to ask again


def test_an_unknown_email_gets_the_same_answer_and_a_mail_that_says_so(client, db):
    reply = client.post("/password-reset/", {"email": "nobody@example.com"})
    assert reply.status_code == 302 and reply["Location"] == "/password-reset/sent/"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["nobody@example.com"]
    assert "no account that signs in with a password uses this address" in \
        " ".join(mail.outbox[0].body.split())
    assert not LINK.search(mail.outbox[0].body)


def test_a_bad_email_is_named_by_its_field(client, db):
    reply = client.post("/password-reset/", {"email": "not an email"})
    assert reply.status_code == 200
    assert "valid email" in " ".join(reply.context["form"].errors["email"])
    assert b"is-invalid" in reply.content


def test_a_forged_link_is_not_found(client, db):
    ada = signed_up(client)
    good = sign_in_link(ada, "http://testserver")
    forged = good[:-3] + ("xx/" if not good.endswith("xx/") else "yy/")
    assert client.get(forged.removeprefix("http://testserver")).status_code == 404
    assert client.get("/password-reset/Zm9v/set-password/").status_code == 404


def test_the_quickstart_link_lets_an_owner_without_a_password_sign_in(client, db):
    owner = get_user_model().objects.create_user(username="root", is_staff=True)
    owner.set_unusable_password()
    owner.save()
    link = sign_in_link(owner, "http://127.0.0.1:8000/")
    assert link.startswith("http://127.0.0.1:8000/password-reset/")
    form_page = client.get(link.removeprefix("http://127.0.0.1:8000"), follow=True)
    assert b"Set a new password" in form_page.content and b"root" in form_page.content
    done = client.post(form_page.redirect_chain[-1][0], {
        "new_password1": "owner passphrase 77", "new_password2": "owner passphrase 77"})
    assert done["Location"] == "/dashboard/"
    owner.refresh_from_db()
    assert owner.check_password("owner passphrase 77")
