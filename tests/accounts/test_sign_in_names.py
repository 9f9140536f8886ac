"""An email (or user name) is one sign-in name in any case or width: every limit keyed by a
posted name counts its spellings together, every page that takes an email finds the same
user with any of them (also users stored before names were folded), and no second account
can be made for a look-alike."""

from __future__ import annotations

import re
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.models import Account, Invitation, Membership
from accounts.principal import principal_for_member, self_hosted_principal
from accounts.sign_in_names import sign_in_name, user_for_sign_in, users_matching
from accounts.team import invite
from memories.catalog.new_accounts import account_create, local_owner_ensure
from tests.factories import make_email_user, make_user
from web.services import sign_up

PW = "a long passphrase 42"
ADA = "ada@example.com"
# A user stored before sign-in names existed, in a form no sign-up makes now.
LEGACY = "Bea@Example.COM"


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def spellings(email: str) -> list[str]:
    """One address as people and attackers type it."""
    local, domain = email.split("@")
    return [email, email.upper(), f"  {email.title()} ", fullwidth(email),
            f"{fullwidth(local)}@{domain}", f"{local}@{fullwidth(domain)}",
            email.replace("@", "\uff20")]


@pytest.fixture
def ada(db):
    user, account = sign_up(email=ADA, password=PW)
    user.is_staff = True  # so the admin's sign-in takes her too
    user.save()
    return user, account


@pytest.fixture
def bea(db):
    user = make_email_user(LEGACY, PW)
    return user, account_create(owner=user, name="Bea's")


# --- the function ----------------------------------------------------------------------------

@pytest.mark.parametrize("typed", spellings(ADA))
def test_every_spelling_is_one_sign_in_name(typed):
    assert sign_in_name(typed) == ADA


def test_compatibility_forms_and_case_folding_beyond_ascii():
    assert sign_in_name("\ufb01@example.com") == "fi@example.com"  # the ligature fi
    assert sign_in_name("STRASSE@x.de") == sign_in_name("stra\u00dfe@x.de") == "strasse@x.de"
    assert sign_in_name("\u3000ada@example.com\u3000") == ADA  # ideographic spaces


def test_names_the_database_cannot_hold_belong_to_nobody(ada):
    assert users_matching("ada@example.com\x00") == []
    assert users_matching("\ud800ada@example.com") == []
    assert user_for_sign_in("") is None


def test_the_lookup_is_one_index_probe_per_field(ada):
    from django.db.models import Value

    from accounts.sign_in_names import Folded

    users = get_user_model().objects.all()
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
    plan = (users.alias(f=Folded("username"), e=Folded("email"))
            .filter(f=Folded(Value(ADA))) | users.alias(e=Folded("email"))
            .filter(e=Folded(Value(ADA)))).explain()
    assert "accounts_user_folded_username" in plan and "accounts_user_folded_email" in plan


# --- every limit keyed by a posted name --------------------------------------------------------

PER_NAME = [("/login/", "login_email", "username"), ("/admin/login/", "login_email", "username"),
            ("/signup/", "signup_email", "email"),
            ("/password-reset/", "password_reset_email", "email")]


def _limited_views():
    found = {}

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "web_limit_keys"):
                found["/" + prefix + str(pattern.pattern)] = pattern.callback

    walk(get_resolver().url_patterns, "")
    return found


def test_every_limit_keyed_by_a_posted_name_is_listed_here():
    keyed = {(path, name, key.posted_field) for path, view in _limited_views().items()
             for name, key in view.web_limit_keys if hasattr(key, "posted_field")}
    assert keyed == set(PER_NAME)


@pytest.mark.parametrize(("path", "limit", "field"), PER_NAME)
def test_every_spelling_of_one_email_counts_against_one_limit(client, ada, settings, path,
                                                             limit, field):
    typed = spellings(ADA)
    names = _limited_views()[path].web_limits
    settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, **dict.fromkeys(names, "1000/m"),
                                limit: f"{len(typed) - 1}/m"}
    data = {"password": "not the password"} if field == "username" else {"password": PW}
    for n, spelling in enumerate(typed[:-1]):  # each from another address
        reply = client.post(path, {**data, field: spelling}, REMOTE_ADDR=f"192.0.2.{n + 1}")
        assert reply.status_code != 429, spelling
    refused = client.post(path, {**data, field: typed[-1]}, REMOTE_ADDR="198.51.100.9")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1


# --- every page that takes an email finds the one user -----------------------------------------

def _signs_in(client, user, typed, path="/login/"):
    reply = client.post(path, {"username": typed, "password": PW, "next": "/dashboard/"})
    assert reply.status_code == 302, reply.content[:300]
    assert client.session["_auth_user_id"] == str(user.pk)


def _admin_signs_in(client, user, typed):
    _signs_in(client, user, typed, "/admin/login/")


def _sign_up_mails_the_owner(client, user, typed):
    users = get_user_model().objects.count()
    assert client.post("/signup/", {"email": typed, "password": PW}).status_code == 302
    assert get_user_model().objects.count() == users  # no second account
    assert [m.to for m in mail.outbox] == [[user.email]]
    assert "already has an account" in " ".join(mail.outbox[0].body.split())
    user.refresh_from_db()
    assert user.check_password(PW)


def _reset_mails_the_owner(client, user, typed):
    assert client.post("/password-reset/", {"email": typed}).status_code == 302
    assert [m.to for m in mail.outbox] == [[user.email]]
    assert re.search(r"/password-reset/[^/\s]+/[^/\s]+/", mail.outbox[0].body)


def _invite_refuses_a_member(client, user, typed):
    owner = make_user("owner@example.com", password=PW)
    account = Account.objects.get(memberships__user=user)
    Membership.objects.create(user=owner, account=account, role=Membership.Role.OWNER)
    client.force_login(owner)
    client.post("/accounts/switch/", {"account": account.pk})
    page = client.post("/team/", {"email": typed, "role": "member"})
    assert page.status_code == 200 and "already a member" in page.content.decode()
    assert not Invitation.objects.exists()


def _invitation_is_the_users(client, user, typed):
    other = make_user("cy@example.com", password=PW)
    account = account_create(owner=other, name="Cy's")
    principal, role = principal_for_member(other, account.pk)
    invite(principal=principal, actor_role=role, email=ADA, role="member",
           link_for=lambda token: f"http://testserver/invitations/{token}/")
    token = re.search(r"/invitations/([\w-]+)/", mail.outbox[-1].body)[1]
    Invitation.objects.update(email=typed.strip())  # sent before emails were folded
    signed_out = client.get(f"/invitations/{token}/").content.decode()
    assert "Sign in to accept" in signed_out  # the person has a user: no second one
    assert client.post(f"/invitations/{token}/", {"password": PW}).status_code == 200
    assert get_user_model().objects.filter(email__iexact=user.email).count() == 1
    client.force_login(user)
    assert client.post(f"/invitations/{token}/").status_code == 302
    assert Membership.objects.filter(user=user, account=account).exists()


def _admin_refuses_a_look_alike_user(client, user, typed):
    root = get_user_model().objects.create_superuser("root", "root@example.com", PW)
    client.force_login(root)
    added = client.post("/admin/auth/user/add/", {
        "username": typed.strip(), "usable_password": "false"})
    assert added.status_code == 200 and "Another user signs in as" in added.content.decode()
    changed = client.post(f"/admin/auth/user/{root.pk}/change/", {
        "username": "root", "email": typed.strip(), "is_active": "on", "is_staff": "on",
        "is_superuser": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert changed.status_code == 200 and "Another user signs in as" in changed.content.decode()
    root.refresh_from_db()
    assert root.email == "root@example.com"


TAKES_AN_EMAIL = {
    "/login/": _signs_in,
    "/admin/login/": _admin_signs_in,
    "/signup/": _sign_up_mails_the_owner,
    "/password-reset/": _reset_mails_the_owner,
    "/team/": _invite_refuses_a_member,
    "/invitations/<str:token>/": _invitation_is_the_users,
    "/admin/auth/user/add/": _admin_refuses_a_look_alike_user,
}


def _pages_without_parameters():
    paths = []

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if "<" in route or "^" in route or "(" in route:
                continue
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            else:
                paths.append("/" + route)

    walk(get_resolver().url_patterns, "")
    return paths


def test_every_page_that_asks_for_an_email_or_a_user_name_is_checked_here(client, ada):
    """Every page without parameters, read signed out and as a superuser owner: those with
    an `email` or `username` field are the ones TAKES_AN_EMAIL covers."""
    root = get_user_model().objects.create_superuser("root", "root@example.com", PW)
    account_create(owner=root, name="Root's")
    asking = set()
    for signed_in in (False, True):
        if signed_in:
            client.force_login(root)
        for path in _pages_without_parameters():
            reply = client.get(path)
            if reply.streaming:  # the audit exports: no forms
                continue
            html = reply.content.decode(errors="replace")
            if re.search(r'name="(email|username)"', html):
                asking.add(path)
    # The invitation page asks too (its path has the token); the user change page is
    # covered with the add page.
    assert asking == set(TAKES_AN_EMAIL) - {"/invitations/<str:token>/"}


@pytest.mark.parametrize("typed", spellings(ADA))
@pytest.mark.parametrize("page", TAKES_AN_EMAIL)
def test_every_page_that_takes_an_email_finds_the_one_user(client, ada, page, typed):
    TAKES_AN_EMAIL[page](client, ada[0], typed)


@pytest.mark.parametrize("typed", spellings(LEGACY.lower()))
@pytest.mark.parametrize("page", ["/login/", "/signup/", "/password-reset/"])
def test_a_user_stored_before_names_were_folded_is_found_too(client, bea, page, typed):
    TAKES_AN_EMAIL[page](client, bea[0], typed)


# --- the other ways in -------------------------------------------------------------------------

def test_quickstart_finds_its_owner_in_any_case(db):
    first, account, created = local_owner_ensure(username="Grace")
    assert created and first.get_username() == "grace"
    again, same, created_again = local_owner_ensure(username="GRACE")
    assert (again.pk, same.pk, created_again) == (first.pk, account.pk, False)


def test_the_self_hosted_user_is_found_in_any_case(ada, settings):
    settings.SELF_HOSTED, settings.SELF_HOSTED_USER_ID = True, fullwidth("ADA") + "@example.com"
    assert self_hosted_principal().holder_id == ada[0].pk


def test_a_staff_name_made_by_hand_signs_in_in_any_case(client, db):
    staff = get_user_model().objects.create_superuser("Admin", "admin@example.com", PW)
    for typed in ("Admin", "admin", fullwidth("ADMIN")):
        _signs_in(client, staff, typed, "/admin/login/")
        client.logout()


@pytest.mark.django_db(transaction=True)
def test_two_sign_ups_of_look_alikes_at_once_make_one_account(settings):
    """The user name is the folded email, and it is unique: one of two racing sign-ups
    gets the account, the other's owner a mail that it exists."""
    from web.services import sign_up_or_remind

    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def sign_up_as(typed: str) -> None:
        try:
            start.wait()
            sign_up_or_remind(email=sign_in_name(typed), password=PW,
                              absolute=lambda path: "http://testserver" + path)
        except BaseException as failure:
            failures.append(failure)
        finally:
            connection.close()

    threads = [threading.Thread(target=sign_up_as, args=(typed,))
               for typed in (ADA, fullwidth("ADA") + "@example.com")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert list(get_user_model().objects.values_list("username", flat=True)) == [ADA]
    assert Account.objects.count() == 1
    assert sorted(m.subject for m in mail.outbox) == [
        "You already have an Echo Memory account", "Your Echo Memory account is ready"]
