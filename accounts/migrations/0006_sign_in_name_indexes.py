"""Indexes for finding a user by sign-in name (accounts/sign_in_names.py): the user table's
user name and email as `lower(normalize(..., NFKC))`, so that a look-up in any case or
width is one index probe, for users stored in any form."""

from django.conf import settings
from django.db import migrations

FIELDS = {"username": "accounts_user_folded_username", "email": "accounts_user_folded_email"}


def _table(apps, schema_editor) -> str:
    user = apps.get_model(settings.AUTH_USER_MODEL)
    return schema_editor.quote_name(user._meta.db_table)


def create(apps, schema_editor) -> None:
    table = _table(apps, schema_editor)
    for field, index in FIELDS.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {schema_editor.quote_name(index)} ON {table} "
            f"(lower(normalize({schema_editor.quote_name(field)}, NFKC)))")


def drop(apps, schema_editor) -> None:
    for index in FIELDS.values():
        schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(index)}")


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0005_account_redaction"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
