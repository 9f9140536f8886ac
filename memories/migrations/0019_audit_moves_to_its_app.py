# The audit chain's models now belong to the audit app (audit 0001): the engine forgets
# them. State only: the tables, their rows and the append-only trigger stay as they are.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0018_erase_stored_secrets"),
        ("audit", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="AuditEvent"),
                migrations.DeleteModel(name="AuditChainHead"),
            ],
            database_operations=[],
        ),
    ]
