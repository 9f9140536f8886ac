"""The one way an email or user name is compared, counted and stored: its sign-in name.

`sign_in_name` is Unicode NFKC, then case folding, then NFKC again (case folding can undo
the first), trimmed: `ada@example.com` written in fullwidth letters (U+FF41...),
`Ada@Example.com` and ` ada@example.com` are one name, so they are one account, one
sign-in limit and one password-reset limit.
Sign-up, invitations and quickstart store new users under it; every lookup goes through
`users_matching`, which also finds users stored before this existed (or by hand, e.g.
with `createsuperuser`) in another form: the database narrows the rows with an index on
`lower(normalize(field, NFKC))` (accounts migration 0006) and this module decides.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import CharField, Func, Q, Value


def sign_in_name(value: str) -> str:
    folded = unicodedata.normalize("NFKC", value).casefold()
    return unicodedata.normalize("NFKC", folded).strip()


class Folded(Func):
    """The database's near-equivalent of sign_in_name, the expression the indexes hold. It
    only narrows candidates: sign_in_name decides (it folds a little more, e.g. ß to ss)."""

    template = "lower(normalize(%(expressions)s, NFKC))"
    output_field = CharField()


class FoldedEmailField(forms.EmailField):
    """A form's email as every lookup and limit folds it, checked once folded: in
    fullwidth letters or capitals it is `ada@example.com`, and the length checked is the
    length stored."""

    def to_python(self, value):
        value = super().to_python(value)
        return sign_in_name(value) if value else value


def users_matching(value: str, *, fields: Iterable[str] = ("username", "email")) -> list:
    """Every user whose `fields` (any of them) have the same sign-in name as `value`, oldest
    first. One query, on the indexes of migration 0006."""
    wanted = sign_in_name(value)
    fields = tuple(fields)
    if not wanted or not _storable(value):
        return []
    typed = {wanted, value.strip()}  # the typed form too: ß stored by hand folds to ß there
    users = get_user_model().objects.all()
    condition = Q()
    for field in fields:
        users = users.alias(**{f"folded_{field}": Folded(field)})
        for form in typed:
            condition |= Q(**{f"folded_{field}": Folded(Value(form))})
    return [user for user in users.filter(condition).order_by("pk")
            if any(sign_in_name(getattr(user, field) or "") == wanted for field in fields)]


def user_for_sign_in(value: str) -> AbstractBaseUser | None:
    """The user a sign-in form's name means. Where an older look-alike pair exists (from
    before names were folded), the one stored exactly as typed, then the one stored folded,
    then the oldest."""
    found = users_matching(value, fields=("username",))
    if not found:
        return None
    for exact in (value.strip(), sign_in_name(value)):
        for user in found:
            if user.get_username() == exact:
                return user
    return found[0]


def email_taken(value: str, *, besides: int | None = None) -> bool:
    """Whether a user other than `besides` (a user id) has this email as their user name or
    email, once both are folded: sign-up, invitations and the admin refuse a second one."""
    return any(user.pk != besides for user in users_matching(value))


def _storable(value: str) -> bool:
    """Whether the database could hold it at all (no NUL, no lone surrogate): a name that
    could not be stored belongs to nobody."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value
