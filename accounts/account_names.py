"""An account's name: owners rename it; every rename is in the account's audit chain.

The name is what people see (the dashboard, the account menu, invitation emails) and what
deleting the account asks them to type; agents never use it."""

from __future__ import annotations

from django.db import transaction

from accounts.account_events import account_event
from accounts.models import Account, Membership
from accounts.principal import Principal
from echomem.errors import Forbidden
from echomem.text import checked_display_name

NAME_CHARS = Account._meta.get_field("name").max_length
ACCOUNT_RENAMED = "account.renamed"


def account_name_check(name: str) -> str:
    """The name as it will be stored (surrounding spaces dropped), or a refusal that says
    what to type instead."""
    return checked_display_name(name, field="name", missing="an account needs a name",
                                example="a name, e.g. your team's", most=NAME_CHARS)


def require_may_rename(actor_role: str | None) -> None:
    if actor_role != Membership.Role.OWNER:
        raise Forbidden("only an owner of the account may rename it", field="name",
                        fix="ask an owner of this account")


@transaction.atomic
def account_rename(*, principal: Principal, actor_role: str, name: str) -> Account:
    require_may_rename(actor_role)
    name = account_name_check(name)
    account = Account.objects.select_for_update().get(pk=principal.account_id)
    if name != account.name:
        account_event(account_id=account.pk, actor_id=principal.holder_id,
                      action=ACCOUNT_RENAMED, object_id=account.pk,
                      after={"name": name, "was": account.name})
        account.name = name
        account.save(update_fields=["name"])
    return account
