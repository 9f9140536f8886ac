"""Every form that creates something answers its POST with a redirect (POST-redirect-GET), so
reloading the page the person lands on creates nothing more; a secret made by the POST (a
key, an invitation link) is shown on that GET once, never in a URL, on a page no cache keeps.

The routes come from the URLconf: a page added later fails here until it says whether it
creates something."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from accounts.models import Account, ApiKey, Invitation, Membership
from accounts.principal import principal_from_key
from accounts.team import token_hash
from memories.models import Memory
from tests.web.test_security_headers import _pages

SECRET = re.compile(r"em_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")
INVITATION_LINK = re.compile(r'value="(https?://[^"]+/invitations/([\w-]+)/)"')
TOKEN = "a-link-token-of-forty-characters-or-so-xx"


def _invitation(actor) -> None:
    Invitation.objects.create(account=actor.account, email="grace@example.com",
                              token_hash=token_hash(TOKEN), invited_by=actor.user,
                              expires_at=timezone.now() + timedelta(days=1))


# route -> (signed in?, what to prepare, the form's valid data)
CREATES = {
    "signup/": (False, None, {"email": "newcomer@example.com",
                              "password": "a long passphrase 42"}),
    "keys/new/": (True, None, {"name": "laptop 2", "tool": "cursor"}),
    "memories/new/": (True, None, {"name": "support"}),
    "team/": (True, None, {"email": "grace@example.com", "role": "member"}),
    "accounts/new/": (True, None, {"name": "Side project"}),
    f"invitations/{TOKEN}/": (False, _invitation, {"password": "a long passphrase 42"}),
}
# Every other route, and why it is not a create form.
NOT_CREATES = {
    "": "the landing page", "healthz": "a probe", "readyz": "a probe", "metrics": "a probe",
    "favicon.ico": "a redirect", "login/": "signs in (a session, no row)",
    "admin/login/": "the admin's sign-in, limited like the site's (a session, no row)",
    "password-reset/": "mails a link, stores nothing", "password-reset/sent/": "a notice",
    "password-reset/<uidb64>/<token>/": "changes a password",
    "verify-email/resend/": "mails a link", "verify-email/<str:token>/": "confirms an email",
    "logout/": "signs out", "dashboard/": "a page",
    "dashboard/first-run/": "the dashboard's checklist, polled (GET only)",
    "keys/<int:key_id>/created/": "the GET a key's creation redirects to",
    "memories/<str:name>/delete/": "deletes", "memories/<str:name>/rename/": "changes",
    "memories/<str:name>/make-default/": "changes", "keys/<int:key_id>/revoke/": "revokes",
    "keys/<int:key_id>/rotate/": "a new secret for the same key (no new row), shown on the "
    "page it redirects to",
    "account/delete/": "deletes", "memories/<str:name>/": "a page",
    "memories/<str:name>/entities/<uuid:entity_id>/": "a page",
    "memories/<str:name>/episodes/<uuid:episode_id>/": "a page",
    "memories/<str:name>/cause/": "a page", "memories/<str:name>/notes/": "a page",
    "memories/<str:name>/facts/<uuid:fact_id>/": "a page",
    "memories/<str:name>/cause/suggest/": "a page fragment",
    "account/preferences/": "changes a setting",
    "memories/<str:name>/notes/<uuid:note_id>/": "a page", "audit/": "a page",
    "audit/export.csv": "a download", "audit/export.jsonl": "a download",
    "audit/verify/": "checks the chain", "account/redaction/": "changes settings; its "
    "'Try it' stores nothing", "team/leave/": "ends a membership",
    "team/members/<int:member_id>/role/": "changes",
    "team/members/<int:member_id>/remove/": "removes",
    "team/invitations/<int:invitation_id>/revoke/": "revokes",
    "accounts/switch/": "changes the session", "billing": "a page", "billing/": "a redirect",
    "billing/checkout/": "sends to Stripe's page", "billing/portal/": "sends to Stripe's page",
    "docs/": "a page", "docs/<slug:page>/": "a page", "account/": "renames",
    # Two-factor sign-in: each POST redirects, and what it makes that is secret (the
    # recovery codes) is shown on the GET once (tests/web/test_account_security_page.py).
    "login/second-factor/": "signs in (the second step)", "account/security/": "a page",
    "account/security/app/": "turns the app on; its recovery codes shown once after",
    "account/security/app/remove/": "removes", "account/security/passkeys/remove/": "removes",
    "account/security/recovery-codes/": "replaces the codes; shown once on the GET",
    "account/security/passkeys/name/": "names a passkey the browser made",
    "account/security/requirement/": "changes a setting",
    "memories/<str:name>/export/": "a download", "account/export/": "a download",
    # Its answer is the import's report; posting the file again changes nothing (the
    # import remembers every record's source).
    "memories/<str:name>/import/": "imports, and a second import is a no-op",
    # (the sign-in branch adds it: the page its sign-up form redirects to)
    "signup/sent/": "a notice",
    "confirm/": "confirms it's you (a time in the session, no row)",
    "account/sessions/": "a page", "account/sessions/<int:sign_in_id>/sign-out/": "signs out",
    "account/sessions/sign-out-others/": "signs out",
    "apps/": "a page", "apps/<int:connection_id>/revoke/": "revokes a connected app",
    "account/password/": "changes a password",
    "admin/password_change/": "the admin's own password change (changes a password)",
}


def _counts() -> dict[str, int]:
    return {model.__name__: model.objects.count()
            for model in (get_user_model(), Account, Membership, Memory, ApiKey, Invitation)}


def test_every_route_says_whether_it_creates_something():
    routes = set(_pages())
    create_routes = {"invitations/<str:token>/" if r.startswith("invitations/") else r
                     for r in CREATES}
    assert routes - create_routes - set(NOT_CREATES) == set(), "classify the new route here"
    assert create_routes & set(NOT_CREATES) == set()


@pytest.mark.parametrize("route", CREATES)
def test_a_create_form_redirects_and_a_reload_creates_nothing_more(client, alice, route):
    signed_in, prepare, data = CREATES[route]
    if signed_in:
        client.force_login(alice.user)
    if prepare:
        prepare(alice)
    before = _counts()
    posted = client.post("/" + route, data)
    assert posted.status_code in (302, 303), (route, posted.status_code)
    assert not SECRET.search(posted["Location"]) and TOKEN not in posted["Location"]
    after = _counts()
    assert after != before, f"{route} created nothing"
    for _ in range(2):  # the page it lands on, then a reload of it
        landed = client.get(posted["Location"], follow=True)
        assert landed.status_code == 200
        assert _counts() == after


def test_a_new_keys_secret_is_shown_on_the_get_once_and_never_again(client, alice):
    client.force_login(alice.user)
    posted = client.post("/keys/new/", {"name": "laptop 2", "tool": "cursor"})
    key = ApiKey.objects.get(name="laptop 2")
    assert posted["Location"] == f"/keys/{key.pk}/created/"
    shown = client.get(posted["Location"])
    assert "no-store" in shown["Cache-Control"]
    plaintext, = set(SECRET.findall(shown.content.decode()))
    assert principal_from_key(plaintext).key_id == key.pk
    reloaded = client.get(posted["Location"])
    assert "no-store" in reloaded["Cache-Control"]
    page = reloaded.content.decode()
    assert not SECRET.search(page) and "shown once" in page
    assert f"/keys/{key.pk}/revoke/" in page  # what to do if it was not copied
    assert ApiKey.objects.filter(account=alice.account).count() == 2


def test_a_key_created_page_is_only_the_holders(client, alice, bob, charlie):
    client.force_login(alice.user)
    posted = client.post("/keys/new/", {"name": "laptop 2", "tool": "cursor"})
    client.force_login(bob.user)
    assert client.get(posted["Location"]).status_code == 404
    client.force_login(charlie.user)
    assert client.get(posted["Location"]).status_code == 404
    assert client.post(posted["Location"]).status_code in (404, 405)


def test_a_new_invitations_link_is_shown_once_with_a_copy_button(client, alice):
    client.force_login(alice.user)
    posted = client.post("/team/", {"email": "grace@example.com", "role": "member"})
    shown = client.get(posted["Location"])
    assert "no-store" in shown["Cache-Control"]
    html = shown.content.decode()
    link, token = INVITATION_LINK.search(html).groups()
    assert link in mail.outbox[-1].body
    assert 'data-copy="invitation-link"' in html and "web/copy.js" in html
    assert Invitation.objects.get(email="grace@example.com").token_hash == token_hash(token)
    again = client.get(posted["Location"]).content.decode()
    assert token not in again and "grace@example.com" in again  # listed, without its link


def test_a_new_secret_never_rides_in_a_cookie(client, admin_client, alice):
    """Not the key page's, nor the admin's, which shows a key it makes in a message."""
    client.force_login(alice.user)
    posted = client.post("/keys/new/", {"name": "laptop 2", "tool": "cursor"})
    made = admin_client.post("/admin/accounts/apikey/add/", {
        "account": alice.account.pk, "holder": alice.user.pk, "name": "ci",
        "tool": "github-actions", "default_memory": ""})
    for response in (posted, made):
        assert response.status_code == 302
        assert "messages" not in response.cookies  # signed, not encrypted: readable
        for cookie in response.cookies.values():
            assert not SECRET.search(cookie.value) and "em_" not in cookie.value, cookie.key
    shown = admin_client.get(made["Location"]).content.decode()
    assert SECRET.search(shown)  # the admin still shows it, once
    assert not SECRET.search(admin_client.get(made["Location"]).content.decode())
