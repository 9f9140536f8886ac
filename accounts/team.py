"""Who belongs to an account and with which role: invitations, role changes, removal, leaving.

The rules live here, not in pages: members manage no one; admins manage members and admins
but never touch owners or make owners; only owners invite or make owners; an account always
keeps at least one owner. Every change locks the account row first, so two concurrent
changes (two owners demoting each other) cannot both pass the last-owner check.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.account_events import account_event
from accounts.models import Account, ApiKey, Invitation, Membership
from accounts.principal import Principal
from accounts.services import api_key_revoke
from accounts.sign_in_names import sign_in_name, users_matching
from echomem.errors import Forbidden, NotFound, ValidationFailed

Role = Membership.Role
MANAGERS = {Role.OWNER, Role.ADMIN}


def email_of(user: AbstractBaseUser) -> str:
    """The user's email as a sign-in name (accounts/sign_in_names.py). Sign-up keeps the
    email as the user name too; staff made by hand may have only one."""
    return sign_in_name(user.email or (user.username if "@" in user.username else ""))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- what a role may do ----------------------------------------------------------------------

def may_manage(actor_role: str, target_role: str) -> bool:
    """Whether `actor_role` may change, remove or invite someone holding `target_role`."""
    if actor_role == Role.OWNER:
        return True
    return actor_role == Role.ADMIN and target_role != Role.OWNER


def require_may_manage(actor_role: str, target_role: str, *, field: str) -> None:
    if actor_role not in MANAGERS:
        raise Forbidden("members cannot invite, change roles or remove others", field=field,
                        fix="ask an owner or admin of the account")
    if not may_manage(actor_role, target_role):
        raise Forbidden("only owners may invite, change or remove owners", field=field,
                        fix="ask an owner of the account")


def _valid_role(role: str, field: str = "role") -> str:
    if role not in Role.values:
        raise ValidationFailed(f"{role!r} is not a role", field=field,
                               fix="pick owner, admin or member")
    return role


def _lock(account_id: int) -> Account:
    return Account.objects.select_for_update().get(pk=account_id)


def _owners(account_id: int) -> int:
    return Membership.objects.filter(account_id=account_id, role=Role.OWNER).count()


def is_last_owner(principal: Principal, role: str) -> bool:
    """Whether the principal is the account's only owner (who may not leave)."""
    return role == Role.OWNER and _owners(principal.account_id) == 1


def _keep_an_owner(membership: Membership, what: str) -> None:
    if membership.role == Role.OWNER and _owners(membership.account_id) == 1:
        raise ValidationFailed(
            f"the last owner of an account cannot {what}", field="role",
            fix="make another member an owner first, or delete the account instead")


# --- reading ---------------------------------------------------------------------------------

def team_members(principal: Principal):
    return (Membership.objects.filter(account_id=principal.account_id)
            .select_related("user").order_by("created_at", "pk"))


def pending_invitations(principal: Principal):
    return (Invitation.objects.filter(account_id=principal.account_id, accepted_at__isnull=True,
                                      revoked_at__isnull=True, expires_at__gt=timezone.now())
            .select_related("invited_by").order_by("-created_at"))


def member_of_account(principal: Principal, member_id: int) -> Membership:
    """A membership of the principal's account; another account's is NotFound, like none."""
    found = (Membership.objects.filter(pk=member_id, account_id=principal.account_id)
             .select_related("user").first())
    if found is None:
        raise NotFound("there is no such member in this account", field="member",
                       fix="pick someone from the team page")
    return found


def invitation_of_account(principal: Principal, invitation_id: int) -> Invitation:
    found = Invitation.objects.filter(pk=invitation_id, account_id=principal.account_id,
                                      accepted_at__isnull=True, revoked_at__isnull=True).first()
    if found is None:
        raise NotFound("there is no such pending invitation in this account",
                       field="invitation", fix="pick an invitation from the team page")
    return found


# --- inviting --------------------------------------------------------------------------------

def invitation_check(*, principal: Principal, actor_role: str, email: str, role: str) -> str:
    """The rules an invitation must meet (forms call this before sending); the clean email."""
    _valid_role(role)
    require_may_manage(actor_role, role, field="role")
    email = sign_in_name(email)
    if "@" not in email:
        raise ValidationFailed("that is not an email address", field="email",
                               fix="type the address the invitation should go to")
    members = Membership.objects.filter(account_id=principal.account_id).select_related("user")
    if any(email_of(m.user) == email for m in members):
        raise ValidationFailed(f"{email} is already a member of this account", field="email",
                               fix="change their role on the team page instead")
    return email


def invite(*, principal: Principal, actor_role: str, email: str, role: str,
           link_for) -> Invitation:
    """Create an invitation and email its link (`link_for(token)` -> absolute URL).

    The token exists only in the email; a repeated invitation to the same address
    replaces the pending one, so only the newest link works.
    """
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        account = _lock(principal.account_id)
        email = invitation_check(principal=principal, actor_role=actor_role, email=email,
                                 role=role)
        now = timezone.now()
        pending = Invitation.objects.filter(account=account, accepted_at__isnull=True,
                                            revoked_at__isnull=True).values_list("pk", "email")
        # Compared folded: a pending invitation written before emails were folded counts.
        Invitation.objects.filter(pk__in=[pk for pk, sent_to in pending
                                          if sign_in_name(sent_to) == email]).update(
                                              revoked_at=now)
        invitation = Invitation.objects.create(
            account=account, email=email, role=role, token_hash=token_hash(token),
            invited_by_id=principal.holder_id,
            expires_at=now + timedelta(days=settings.INVITATION_EXPIRY_DAYS))
        account_event(account_id=account.pk, actor_id=principal.holder_id,
                      action="member.invited", object_id=invitation.pk,
                      after={"email": email, "role": role})
        # Sent inside the transaction: if sending fails, no invitation exists that nobody got.
        send_mail(
            subject=f"You are invited to {account.name} on Echo Memory",
            message=(f"You are invited to join {account.name} on Echo Memory as {role}.\n\n"
                     f"Accept the invitation: {link_for(token)}\n\n"
                     f"The link works once and expires on {invitation.expires_at:%Y-%m-%d %H:%M} "
                     "UTC. If you did not expect it, ignore this email."),
            from_email=None, recipient_list=[email])
    return invitation


@transaction.atomic
def invitation_revoke(*, principal: Principal, actor_role: str, invitation_id: int) -> Invitation:
    _lock(principal.account_id)
    invitation = invitation_of_account(principal, invitation_id)
    require_may_manage(actor_role, invitation.role, field="invitation")
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    account_event(account_id=invitation.account_id, actor_id=principal.holder_id,
                  action="invitation.revoked", object_id=invitation.pk,
                  after={"email": invitation.email, "role": invitation.role})
    return invitation


# --- accepting -------------------------------------------------------------------------------

class InvitationUnusable(Exception):
    """Why a link cannot be used, for the page that says what to do instead."""

    def __init__(self, reason: str, invitation: Invitation | None = None):
        super().__init__(reason)
        self.reason, self.invitation = reason, invitation


def invitation_by_token(token: str, *, lock: bool = False) -> Invitation:
    """The invitation a link names, if it can still be accepted; else InvitationUnusable
    with reason `unknown`, `accepted`, `revoked` or `expired`."""
    found = Invitation.objects.select_related("account", "invited_by")
    if lock:
        found = found.select_for_update(of=("self",))
    invitation = found.filter(token_hash=token_hash(token)).first()
    if invitation is None:
        raise InvitationUnusable("unknown")
    if invitation.accepted_at is not None:
        raise InvitationUnusable("accepted", invitation)
    if invitation.revoked_at is not None:
        raise InvitationUnusable("revoked", invitation)
    if invitation.expires_at <= timezone.now():
        raise InvitationUnusable("expired", invitation)
    return invitation


def invitation_for_user(token: str, user: AbstractBaseUser | None) -> Invitation:
    """The invitation, checked for `user` (None: not signed in). A signed-in person with
    another email gets NotFound: the link is not theirs, and says nothing about the account."""
    invitation = invitation_by_token(token)
    if user is not None and email_of(user) != sign_in_name(invitation.email):
        raise NotFound("this invitation was sent to a different email address",
                       field="email", fix="sign out, then open the link again and sign in or "
                                          "sign up with the address the invitation went to")
    return invitation


def accept(*, token: str, user: AbstractBaseUser) -> Membership:
    """Join the account: once only (the invitation row is locked), while neither expired nor
    revoked, and only as the user the invitation was sent to."""
    with transaction.atomic():
        invitation = invitation_by_token(token, lock=True)
        if email_of(user) != sign_in_name(invitation.email):
            raise NotFound("this invitation was sent to a different email address",
                           field="email", fix="sign in with the address the invitation went to")
        _lock(invitation.account_id)
        membership, created = Membership.objects.get_or_create(
            user=user, account_id=invitation.account_id, defaults={"role": invitation.role})
        invitation.accepted_at, invitation.accepted_by = timezone.now(), user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        if created:
            account_event(account_id=invitation.account_id, actor_id=user.pk,
                          action="member.joined", object_id=membership.pk,
                          after={"user": user.pk, "email": invitation.email,
                                 "role": invitation.role, "invitation": invitation.pk})
    return membership


def user_exists(email: str) -> bool:
    """Whether a user has this email (or user name) in any case or width."""
    return bool(users_matching(email))


def accept_as_new_user(*, token: str, password: str) -> tuple[AbstractBaseUser, Membership]:
    """A person without a user signs up through the invitation, even with sign-up closed:
    the user is created with the invited email, in the same transaction as joining."""
    taken = ValidationFailed("a user with this email exists", field="email",
                             fix="sign in, then open the link again")
    with transaction.atomic():
        invitation = invitation_by_token(token, lock=True)
        email = sign_in_name(invitation.email)
        if user_exists(email):
            raise taken
        try:
            with transaction.atomic():  # a sign-up racing this one takes the name first
                user = get_user_model().objects.create_user(username=email, email=email,
                                                            password=password)
        except IntegrityError:
            raise taken from None
        return user, accept(token=token, user=user)


# --- changing the team -----------------------------------------------------------------------

@transaction.atomic
def member_role_change(*, principal: Principal, actor_role: str, member_id: int,
                       role: str) -> Membership:
    _lock(principal.account_id)
    membership = member_of_account(principal, member_id)
    _valid_role(role)
    require_may_manage(actor_role, membership.role, field="member")
    require_may_manage(actor_role, role, field="role")
    if role == membership.role:
        return membership
    if role != Role.OWNER:
        _keep_an_owner(membership, "be demoted")
    before, membership.role = membership.role, role
    membership.save(update_fields=["role"])
    account_event(account_id=principal.account_id, actor_id=principal.holder_id,
                  action="member.role_changed", object_id=membership.pk,
                  after={"user": membership.user_id, "from": before, "to": role})
    return membership


def _end(membership: Membership, *, actor_id: int | None, how: str) -> int:
    """Delete the membership and revoke the person's keys in this account."""
    keys = list(ApiKey.objects.filter(account_id=membership.account_id,
                                      holder_id=membership.user_id, revoked_at__isnull=True))
    for key in keys:
        api_key_revoke(key=key, actor_id=actor_id)
    member_id = membership.pk  # delete() clears it
    membership.delete()
    account_event(account_id=membership.account_id, actor_id=actor_id, action="member.removed",
                  object_id=member_id,
                  after={"user": membership.user_id, "role": membership.role, "how": how,
                         "keys_revoked": len(keys)})
    return len(keys)


@transaction.atomic
def member_remove(*, principal: Principal, actor_role: str, member_id: int) -> int:
    """Remove someone else from the account; returns how many of their keys were revoked."""
    _lock(principal.account_id)
    membership = member_of_account(principal, member_id)
    if membership.user_id == principal.holder_id:
        raise ValidationFailed("you cannot remove yourself", field="member",
                               fix="use “Leave this account” on the team page")
    require_may_manage(actor_role, membership.role, field="member")
    _keep_an_owner(membership, "be removed")
    return _end(membership, actor_id=principal.holder_id, how="removed")


@transaction.atomic
def account_leave(*, principal: Principal) -> int:
    _lock(principal.account_id)
    membership = Membership.objects.get(account_id=principal.account_id,
                                        user_id=principal.holder_id)
    _keep_an_owner(membership, "leave")
    return _end(membership, actor_id=principal.holder_id, how="left")


def accounts_of(user: AbstractBaseUser):
    return (Membership.objects.filter(user=user).select_related("account")
            .order_by("account__name", "account_id"))
