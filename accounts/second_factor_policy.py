"""An account's rule that every member signs in with a second factor: owners turn it on
(only once they have a factor themselves) and off; each change is in the audit chain."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.account_events import account_event
from accounts.models import Account, Membership
from accounts.principal import Principal
from accounts.second_factors import has_factor
from echomem.errors import Forbidden, ValidationFailed

SECOND_FACTOR_REQUIRED = "account.second_factor_required"


def require_may_set(actor_role: str | None) -> None:
    if actor_role != Membership.Role.OWNER:
        raise Forbidden("only an owner of the account may require a second factor",
                        field="required", fix="ask an owner of this account")


@transaction.atomic
def set_factor_required(*, principal: Principal, actor_role: str, user: Any,
                        required: bool) -> Account:
    """Require (or stop requiring) a second factor of every member of the account."""
    require_may_set(actor_role)
    if required and not has_factor(user=user):
        raise ValidationFailed("you have no second factor yourself", field="required",
                               fix="set up an authenticator app or a passkey first, so the "
                                   "rule cannot lock you out")
    account = Account.objects.select_for_update().get(pk=principal.account_id)
    if account.require_second_factor != required:
        account_event(account_id=account.pk, actor_id=principal.holder_id,
                      action=SECOND_FACTOR_REQUIRED, object_id=account.pk,
                      after={"required": required})
        account.require_second_factor = required
        account.save(update_fields=["require_second_factor"])
    return account
