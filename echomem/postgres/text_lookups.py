"""Text lookups for a value PostgreSQL cannot hold match no row, instead of failing.

A `text` or `varchar` value never contains NUL, and UTF-8 cannot encode a lone
surrogate: PostgreSQL refuses such a parameter outright (psycopg: "PostgreSQL text
fields cannot contain NUL (0x00) bytes"), so a lookup for one, made from a path
segment, a query string or a form value anybody can send, failed the whole request
with a 500. No stored row can equal, start with or contain such a value, so the lookup
matches nothing, the way Django itself answers an integer lookup outside the column's
range (`IntegerFieldOverflow`). Writes are not covered: a value to be stored is checked
where it enters, and refused by name (forms, the tools' argument models, the webhook).
"""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db.models import CharField, TextField, lookups

from echomem.text import unstorable


def _storable(value: object) -> bool:
    return not (isinstance(value, str) and unstorable(value))


class _UnstorableMatchesNothing:
    def process_rhs(self, compiler, connection):
        if not _storable(self.rhs):
            raise EmptyResultSet
        return super().process_rhs(compiler, connection)


class TextExact(_UnstorableMatchesNothing, lookups.Exact):
    pass


class TextIExact(_UnstorableMatchesNothing, lookups.IExact):
    pass


class TextContains(_UnstorableMatchesNothing, lookups.Contains):
    pass


class TextIContains(_UnstorableMatchesNothing, lookups.IContains):
    pass


class TextStartsWith(_UnstorableMatchesNothing, lookups.StartsWith):
    pass


class TextIStartsWith(_UnstorableMatchesNothing, lookups.IStartsWith):
    pass


class TextEndsWith(_UnstorableMatchesNothing, lookups.EndsWith):
    pass


class TextIEndsWith(_UnstorableMatchesNothing, lookups.IEndsWith):
    pass


class TextIn(lookups.In):
    """The values no row can hold are left out; none left matches nothing (Django's In)."""

    def process_rhs(self, compiler, connection):
        if self.rhs_is_direct_value():
            self.rhs = [value for value in self.rhs if _storable(value)]
        return super().process_rhs(compiler, connection)


LOOKUPS = (TextExact, TextIExact, TextContains, TextIContains, TextStartsWith,
           TextIStartsWith, TextEndsWith, TextIEndsWith, TextIn)


def register() -> None:
    """For every text field, the project's and Django's own (users, sessions, the admin)."""
    for field in (CharField, TextField):
        for lookup in LOOKUPS:
            field.register_lookup(lookup)
