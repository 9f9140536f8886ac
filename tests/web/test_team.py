"""Team: invitations by email link, roles and the last owner, switching accounts, and the
account-level audit events they record."""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.utils import timezone

from accounts import team
from accounts.models import Account, ApiKey, Invitation, Membership
from accounts.principal import principal_for_member
from accounts.services import api_key_create
from audit.models import AuditEvent
from audit.verify import audit_verify
from echomem.errors import Forbidden, ValidationFailed
from memories.catalog.new_accounts import account_create
from memories.graph.selectors import get_audit_log
from tests.factories import make_email_user

Role = Membership.Role
LINK = re.compile(r"https?://\S+/invitations/([\w-]+)/")


def join(user, account: Account, role: str) -> Membership:
    return Membership.objects.create(user=user, account=account, role=role)


def invite(owner, account: Account, email: str, role: str = Role.MEMBER) -> str:
    """Invite through the service, as the team page does; the token comes from the email."""
    principal, actor_role = principal_for_member(owner, account.pk)
    team.invite(principal=principal, actor_role=actor_role, email=email, role=role,
                link_for=lambda token: f"http://testserver/invitations/{token}/")
    return LINK.search(mail.outbox[-1].body)[1]


@pytest.fixture
def ada(db):
    user = make_email_user("ada@example.com")
    return user, account_create(owner=user, name="Ada's lab")


# --- invitations -----------------------------------------------------------------------------

def test_invite_from_the_team_page_emails_a_link_that_stores_only_a_hash(client, ada):
    owner, account = ada
    client.force_login(owner)
    response = client.post("/team/", {"email": "Grace@Example.com", "role": "admin"})
    assert response.status_code == 302 and response.url == "/team/"
    message, = mail.outbox
    assert message.to == ["grace@example.com"] and "Ada's lab" in message.subject
    token = LINK.search(message.body)[1]
    invitation = Invitation.objects.get(account=account)
    assert invitation.token_hash == team.token_hash(token) and token not in invitation.token_hash
    assert abs(invitation.expires_at - invitation.created_at - timedelta(days=7)).seconds < 60
    assert "grace@example.com" in client.get("/team/").content.decode()


def test_bad_invitation_input_names_the_field(client, ada):
    owner, _ = ada
    client.force_login(owner)
    page = client.post("/team/", {"email": "not-an-address", "role": "member"})
    assert page.status_code == 200 and "Enter a valid email address" in page.content.decode()
    page = client.post("/team/", {"email": "ada@example.com", "role": "member"})
    assert "already a member of this account" in page.content.decode()
    assert not Invitation.objects.exists() and mail.outbox == []


def test_a_new_person_signs_up_through_the_link_even_with_sign_up_closed(client, ada, settings):
    settings.OPEN_SIGNUP = False
    owner, account = ada
    token = invite(owner, account, "grace@example.com")
    page = client.get(f"/invitations/{token}/")
    assert page.status_code == 200 and "Create user and join" in page.content.decode()
    weak = client.post(f"/invitations/{token}/", {"password": "short"})
    assert weak.status_code == 200 and "too short" in weak.content.decode()
    assert not get_user_model().objects.filter(username="grace@example.com").exists()

    joined = client.post(f"/invitations/{token}/", {"password": "a long passphrase 42"})
    assert joined.status_code == 302 and joined.url == "/dashboard/"
    grace = get_user_model().objects.get(username="grace@example.com")
    assert Membership.objects.get(user=grace, account=account).role == Role.MEMBER
    assert "Ada&#x27;s lab" in client.get("/dashboard/").content.decode()
    assert Invitation.objects.get().accepted_by == grace


def test_an_existing_user_signs_in_then_accepts(client, ada):
    owner, account = ada
    grace = make_email_user("grace@example.com")
    token = invite(owner, account, "grace@example.com", Role.ADMIN)
    assert "Sign in to accept" in client.get(f"/invitations/{token}/").content.decode()
    client.force_login(grace)
    assert client.post(f"/invitations/{token}/").status_code == 302
    assert Membership.objects.get(user=grace, account=account).role == Role.ADMIN


def test_a_link_works_once(client, ada):
    owner, account = ada
    token = invite(owner, account, "grace@example.com")
    client.post(f"/invitations/{token}/", {"password": "a long passphrase 42"})
    client.logout()
    again = client.get(f"/invitations/{token}/")
    assert again.status_code == 410 and "already used" in again.content.decode()
    assert client.post(f"/invitations/{token}/", {"password": "x"}).status_code == 410
    assert Membership.objects.filter(account=account).count() == 2


def test_an_expired_link_is_refused_with_what_to_do(client, ada):
    owner, account = ada
    token = invite(owner, account, "grace@example.com")
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    page = client.post(f"/invitations/{token}/", {"password": "a long passphrase 42"})
    assert page.status_code == 410 and "has expired" in page.content.decode()
    assert "send a new one" in page.content.decode()
    assert not get_user_model().objects.filter(username="grace@example.com").exists()


def test_a_revoked_link_is_refused_and_a_new_invitation_replaces_the_old(client, ada):
    owner, account = ada
    first = invite(owner, account, "grace@example.com")
    second = invite(owner, account, "grace@example.com")
    assert client.get(f"/invitations/{first}/").status_code == 410  # replaced
    client.force_login(owner)
    pending = Invitation.objects.get(token_hash=team.token_hash(second))
    assert client.post(f"/team/invitations/{pending.pk}/revoke/").status_code == 302
    client.logout()
    page = client.get(f"/invitations/{second}/")
    assert page.status_code == 410 and "was revoked" in page.content.decode()
    assert client.get("/invitations/no-such-token/").status_code == 404


def test_accepting_while_signed_in_with_another_email_is_refused(client, ada):
    owner, account = ada
    token = invite(owner, account, "grace@example.com")
    mallory = make_email_user("mallory@example.com")
    client.force_login(mallory)
    page = client.post(f"/invitations/{token}/")
    assert page.status_code == 404 and "sent to a different email" in page.content.decode()
    assert "grace@example.com" not in page.content.decode()
    assert not Membership.objects.filter(user=mallory, account=account).exists()
    assert Invitation.objects.get().accepted_at is None


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_accepts_of_one_link_cannot_both_succeed():
    owner = make_email_user("ada@example.com")
    account = account_create(owner=owner, name="Ada's lab")
    token = invite(owner, account, "grace@example.com")
    barrier, outcomes = threading.Barrier(2), []

    def accept() -> None:
        try:
            barrier.wait()
            try:
                team.accept_as_new_user(token=token, password="a long passphrase 42")
                outcomes.append("joined")
            except (team.InvitationUnusable, ValidationFailed) as refused:
                outcomes.append(type(refused).__name__)
        finally:
            connection.close()

    threads = [threading.Thread(target=accept) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["InvitationUnusable", "joined"]
    assert get_user_model().objects.filter(username="grace@example.com").count() == 1
    assert Membership.objects.filter(account=account).count() == 2
    assert AuditEvent.objects.filter(account=account, action="member.joined").count() == 1


# --- roles -----------------------------------------------------------------------------------

@pytest.fixture
def crew(db):
    """An account with two owners, two admins and a member, and two pending invitations."""
    users = {name: make_email_user(f"{name}@example.com")
             for name in ("o1", "o2", "ad", "ad2", "me")}
    account = account_create(owner=users["o1"], name="Crew")
    join(users["o2"], account, Role.OWNER)
    join(users["ad"], account, Role.ADMIN)
    join(users["ad2"], account, Role.ADMIN)
    join(users["me"], account, Role.MEMBER)
    invite(users["o1"], account, "new-member@example.com", Role.MEMBER)
    invite(users["o1"], account, "new-owner@example.com", Role.OWNER)
    return users, account


def _member(account, user) -> int:
    return Membership.objects.get(account=account, user=user).pk


def _invitation(email: str) -> int:
    return Invitation.objects.get(email=email).pk


ACTIONS = {
    "invite a member": lambda p, r, u, a: team.invite(
        principal=p, actor_role=r, email="x@example.com", role=Role.MEMBER, link_for=str),
    "invite an admin": lambda p, r, u, a: team.invite(
        principal=p, actor_role=r, email="x@example.com", role=Role.ADMIN, link_for=str),
    "invite an owner": lambda p, r, u, a: team.invite(
        principal=p, actor_role=r, email="x@example.com", role=Role.OWNER, link_for=str),
    "promote a member to admin": lambda p, r, u, a: team.member_role_change(
        principal=p, actor_role=r, member_id=_member(a, u["me"]), role=Role.ADMIN),
    "demote an admin": lambda p, r, u, a: team.member_role_change(
        principal=p, actor_role=r, member_id=_member(a, u["ad2"]), role=Role.MEMBER),
    "make a member owner": lambda p, r, u, a: team.member_role_change(
        principal=p, actor_role=r, member_id=_member(a, u["me"]), role=Role.OWNER),
    "demote an owner": lambda p, r, u, a: team.member_role_change(
        principal=p, actor_role=r, member_id=_member(a, u["o2"]), role=Role.ADMIN),
    "remove a member": lambda p, r, u, a: team.member_remove(
        principal=p, actor_role=r, member_id=_member(a, u["me"])),
    "remove an admin": lambda p, r, u, a: team.member_remove(
        principal=p, actor_role=r, member_id=_member(a, u["ad2"])),
    "remove an owner": lambda p, r, u, a: team.member_remove(
        principal=p, actor_role=r, member_id=_member(a, u["o2"])),
    "revoke a member's invitation": lambda p, r, u, a: team.invitation_revoke(
        principal=p, actor_role=r, invitation_id=_invitation("new-member@example.com")),
    "revoke an owner's invitation": lambda p, r, u, a: team.invitation_revoke(
        principal=p, actor_role=r, invitation_id=_invitation("new-owner@example.com")),
}
OWNERS_ONLY = {"invite an owner", "make a member owner", "demote an owner", "remove an owner",
               "revoke an owner's invitation"}
ALLOWED = {
    "o1": set(ACTIONS),
    "ad": set(ACTIONS) - OWNERS_ONLY,
    # "me" (a member) is in the crew but is not the actor here, so a fresh member acts.
    "member": set(),
}


@pytest.mark.parametrize("actor", ["o1", "ad", "member"])
@pytest.mark.parametrize("action", list(ACTIONS))
def test_each_role_may_do_only_its_actions(crew, actor, action):
    users, account = crew
    if actor == "member":
        users["member"] = make_email_user("plain@example.com")
        join(users["member"], account, Role.MEMBER)
    principal, role = principal_for_member(users[actor], account.pk)
    before = (list(Membership.objects.values_list("pk", "role").order_by("pk")),
              list(Invitation.objects.values_list("pk", "revoked_at").order_by("pk")))
    if action in ALLOWED[actor]:
        ACTIONS[action](principal, role, users, account)
    else:
        with pytest.raises(Forbidden):
            ACTIONS[action](principal, role, users, account)
        after = (list(Membership.objects.values_list("pk", "role").order_by("pk")),
                 list(Invitation.objects.values_list("pk", "revoked_at").order_by("pk")))
        assert after == before  # nothing half-done


def test_a_member_gets_403_from_every_team_change(client, crew):
    users, account = crew
    client.force_login(users["me"])
    assert client.post("/team/", {"email": "x@example.com", "role": "member"}).status_code == 403
    admin = _member(account, users["ad"])
    assert client.get(f"/team/members/{admin}/remove/").status_code == 403
    assert client.post(f"/team/members/{admin}/role/", {"role": "member"}).status_code == 403
    invitation = _invitation("new-member@example.com")
    assert client.post(f"/team/invitations/{invitation}/revoke/").status_code == 403
    page = client.get("/team/").content.decode()
    assert "Invite someone" not in page and "Remove" not in page and "Leave this account" in page


def test_the_last_owner_cannot_be_demoted_removed_or_leave(client, ada):
    owner, account = ada
    second = make_email_user("grace@example.com")
    join(second, account, Role.OWNER)
    principal, _ = principal_for_member(second, account.pk)
    team.account_leave(principal=principal)  # one of two owners may leave
    principal, role = principal_for_member(owner, account.pk)
    mine = _member(account, owner)
    with pytest.raises(ValidationFailed, match="last owner"):
        team.member_role_change(principal=principal, actor_role=role, member_id=mine,
                                role=Role.ADMIN)
    with pytest.raises(ValidationFailed, match="last owner"):
        team.account_leave(principal=principal)
    with pytest.raises(ValidationFailed, match="yourself"):
        team.member_remove(principal=principal, actor_role=role, member_id=mine)

    client.force_login(owner)
    page = client.post("/team/leave/")
    assert page.status_code == 200 and "last owner" in page.content.decode()
    page = client.post(f"/team/members/{mine}/role/", {"role": "member"})
    assert "last owner" in page.content.decode() and "make another member an owner" in \
        page.content.decode()
    assert Membership.objects.get(pk=mine).role == Role.OWNER


def test_the_last_owner_cannot_be_removed_by_another_owner_who_is_leaving(ada):
    owner, account = ada
    second = make_email_user("grace@example.com")
    join(second, account, Role.OWNER)
    principal, role = principal_for_member(second, account.pk)
    team.member_remove(principal=principal, actor_role=role,
                       member_id=_member(account, owner))  # two owners: allowed
    with pytest.raises(ValidationFailed, match="last owner"):
        team.account_leave(principal=principal)


def test_removing_a_member_revokes_their_keys_in_that_account(client, alice, bob):
    elsewhere = account_create(owner=bob.user, name="Bob's own")
    their_own, _ = api_key_create(account=elsewhere, holder=bob.user, name="x", tool="cli")
    client.force_login(alice.user)
    member_id = _member(alice.account, bob.user)
    page = client.get(f"/team/members/{member_id}/remove/").content.decode()
    assert "1 active API key in this account is revoked" in page
    assert client.post(f"/team/members/{member_id}/remove/").status_code == 302
    assert ApiKey.objects.get(pk=bob.key.pk).revoked_at is not None
    assert ApiKey.objects.get(pk=their_own.pk).revoked_at is None
    assert not Membership.objects.filter(user=bob.user, account=alice.account).exists()
    client.force_login(bob.user)
    assert "Alice&#x27;s team" not in client.get("/dashboard/").content.decode()


# --- several accounts ------------------------------------------------------------------------

def test_switching_accounts_changes_the_dashboard(client, alice, charlie):
    client.force_login(alice.user)
    created = client.post("/accounts/new/", {"name": "Side project"})
    assert created.status_code == 302
    side = Account.objects.get(name="Side project")
    assert Membership.objects.get(account=side, user=alice.user).role == Role.OWNER
    dashboard = client.get("/dashboard/").content.decode()
    assert "<h1 class=\"h3 mb-1\">Side project</h1>" in dashboard and "No API keys yet" in dashboard
    assert client.post("/accounts/switch/", {"account": alice.account.pk}).status_code == 302
    dashboard = client.get("/dashboard/").content.decode()
    assert "Alice&#x27;s team</h1>" in dashboard and "em_" + alice.key.prefix in dashboard
    assert 'name="account"' in dashboard and "Side project (owner)" in dashboard


def test_a_user_cannot_switch_into_an_account_they_are_not_in(client, alice, charlie):
    client.force_login(alice.user)
    assert client.post("/accounts/switch/", {"account": charlie.account.pk}).status_code == 404
    assert client.post("/accounts/switch/", {"account": "x"}).status_code == 404
    assert client.get("/accounts/switch/").status_code == 405
    assert "Charlie" not in client.get("/dashboard/").content.decode()


def test_a_new_account_needs_a_name(client, alice):
    client.force_login(alice.user)
    page = client.post("/accounts/new/", {"name": "   "})
    assert page.status_code == 200 and "This field is required" in page.content.decode()


# --- audit -----------------------------------------------------------------------------------

def test_account_events_are_recorded_and_absent_from_get_audit_log(client, ada):
    owner, account = ada
    client.force_login(owner)
    client.post("/memories/new/", {"name": "notes"})
    client.post("/keys/new/", {"name": "laptop", "tool": "claude-code"})
    key = ApiKey.objects.get(account=account)
    client.post(f"/keys/{key.pk}/revoke/")
    token = invite(owner, account, "grace@example.com")
    invite(owner, account, "lin@example.com")
    client.post(f"/team/invitations/{Invitation.objects.get(email='lin@example.com').pk}/revoke/")
    grace = make_email_user("grace@example.com")
    team.accept(token=token, user=grace)
    member_id = _member(account, grace)
    client.post(f"/team/members/{member_id}/role/", {"role": "admin"})
    client.post(f"/team/members/{member_id}/remove/")

    events = list(AuditEvent.objects.filter(account=account).order_by("seq"))
    assert [e.action for e in events] == [
        "memory.created", "memory.created", "key.created", "key.revoked", "member.invited",
        "member.invited", "invitation.revoked", "member.joined", "member.role_changed",
        "member.removed"]
    assert all(e.partition == "" for e in events)
    account_level = [e for e in events if not e.action.startswith("memory.")]
    assert all(e.memory_id is None for e in account_level)
    assert events[8].after == {"user": grace.pk, "from": "member", "to": "admin"}
    assert events[8].holder_id == owner.pk and events[7].holder_id == grace.pk
    assert audit_verify(account.pk) == (True, None)

    principal, _ = principal_for_member(owner, account.pk)
    for memory in ("default", "notes"):
        for scope in ("shared", "solo"):
            log = get_audit_log(principal, memory=memory, scope=scope)
            assert log["events"] == [], (memory, scope)
