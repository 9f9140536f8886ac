"""Opening an account: a tenant with the `default` memory every account starts with.

Above tenancy and the graph because it makes both (accounts imports no engine): the web's
sign-up, a person's further account and the single box's owner (quickstart, with its
key) open theirs here."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from accounts.models import Account, ApiKey, Membership
from accounts.services import api_key_create
from accounts.sign_in_names import sign_in_name, user_for_sign_in
from echomem.errors import ValidationFailed
from memories.graph.selectors import DEFAULT_MEMORY_NAME
from memories.graph.services import memory_create


@transaction.atomic
def account_create(*, owner: AbstractBaseUser, name: str) -> Account:
    """A new tenant owned by `owner`, with the `default` memory every account starts with."""
    account = Account.objects.create(name=name)
    Membership.objects.create(user=owner, account=account, role=Membership.Role.OWNER)
    account.default_memory = memory_create(account_id=account.pk, name=DEFAULT_MEMORY_NAME,
                                           description="Created with the account.",
                                           actor_id=owner.pk)
    account.save(update_fields=["default_memory"])
    return account


def another_account_create(*, user: AbstractBaseUser, name: str) -> Account:
    name = name.strip()
    if not name:
        raise ValidationFailed("an account needs a name", field="name",
                               fix="type a name, e.g. your team's")
    return account_create(owner=user, name=name)


@transaction.atomic
def local_owner_ensure(*, username: str) -> tuple[AbstractBaseUser, Account, bool]:
    """The single box's owner and account; a second run finds and reuses them.

    The user gets no usable password: quickstart prints a one-time link that sets one
    and signs them in to the dashboard.
    """
    # Found in any case or width, as sign-in finds it; made under its sign-in name.
    user = user_for_sign_in(username) or get_user_model().objects.create(
        username=sign_in_name(username), is_staff=True, is_superuser=True)
    if not user.has_usable_password() and user.password == "":
        user.set_unusable_password()
        user.save(update_fields=["password"])
    owned = Membership.objects.filter(user=user, role=Membership.Role.OWNER).order_by("created_at")
    membership = owned.select_related("account").first()
    if membership is not None:
        return user, membership.account, False
    return user, account_create(owner=user, name=f"{username}'s account"), True


QUICKSTART_TOOL = "quickstart"


def quickstart_key(
    *, account: Account, holder: AbstractBaseUser, new: bool
) -> tuple[ApiKey, str | None]:
    """The quickstart key: reused if one is active (plaintext None: it was shown once)."""
    if not new:
        existing = ApiKey.objects.filter(
            account=account, holder=holder, tool=QUICKSTART_TOOL, revoked_at__isnull=True
        ).order_by("created_at").first()
        if existing is not None:
            return existing, None
    return api_key_create(account=account, holder=holder, name="quickstart",
                          tool=QUICKSTART_TOOL, default_memory=account.default_memory)
