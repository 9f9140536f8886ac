"""Every account's audit chain checked, named as the operator knows the accounts (the
`echo-memory audit verify` command): the listing is tenancy's, the checking audit's."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from accounts.models import Account
from audit.verify import audit_verify
from echomem.errors import NotFound


@dataclass(frozen=True)
class AccountChain:
    account_id: int
    account_name: str
    ok: bool
    broken_seq: int | None


def audit_verify_accounts(
    account_id: int | None = None, *,
    track: Callable[[list[tuple[int, str]]], Iterable[tuple[int, str]]] = iter,
) -> list[AccountChain]:
    """Verify one account's audit chain, or every account's in id order.

    `track` wraps the list of (id, name) being verified, e.g. in a progress bar.
    """
    accounts = Account.objects.order_by("pk")
    if account_id is not None:
        accounts = accounts.filter(pk=account_id)
    listed = list(accounts.values_list("pk", "name"))
    if account_id is not None and not listed:
        raise no_such_account(account_id)
    return [AccountChain(pk, name, *audit_verify(pk)) for pk, name in track(listed)]


def no_such_account(account_id: int) -> NotFound:
    return NotFound(f"there is no account {account_id}", field="--account",
                    fix="pass the id of an existing account, or omit --account")
