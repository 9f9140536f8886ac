"""The box's operator acting on an account from the command line (`echo-memory export`,
`import`): as the account's first owner, with the tool label `cli`. The operator runs
commands on the box's own database, so holds every account already; this only says as whom
the changes are recorded."""

from __future__ import annotations

from django.conf import settings

from accounts.models import Account, Membership
from accounts.principal import Principal, self_hosted_principal
from echomem.errors import NotFound

CLI_TOOL = "cli"


def operator_principal(account_id: int | None = None) -> Principal:
    """The principal for `account_id`; without one, ECHO_MEMORY_USER_ID's account, else the
    box's only account (several: refused, listing them)."""
    if account_id is None:
        if settings.SELF_HOSTED_USER_ID:
            account_id = self_hosted_principal().account_id
        else:
            accounts = list(Account.objects.order_by("pk").values_list("pk", "name")[:21])
            if len(accounts) != 1:
                listed = ", ".join(f"{pk} ({name})" for pk, name in accounts[:20]) or "none"
                raise NotFound(f"this box holds {len(accounts)} accounts; say which: {listed}",
                               field="--account", fix="pass --account ID")
            account_id = accounts[0][0]
    owner = (Membership.objects.filter(account_id=account_id, role=Membership.Role.OWNER)
             .order_by("created_at").values_list("user_id", flat=True).first())
    if owner is None:
        raise NotFound(f"no account {account_id} with an owner on this box", field="--account",
                       fix="pass the id of an account (`echo-memory manage shell` lists them)")
    return Principal(account_id=account_id, holder_id=owner, tool=CLI_TOOL)
