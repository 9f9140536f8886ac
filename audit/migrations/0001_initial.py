# The audit chain's models move from the engine (memories) to this app. State only: the
# tables keep their names (db_table), their rows, their indexes and the append-only
# trigger of memories migrations 0004, 0008 and 0018. AuditEvent.memory was a foreign key
# without a database constraint (db_constraint=False), so it becomes the plain id column
# it already was in the database (an erased memory's events outlive it); no DDL is needed.
# memories 0019 removes the models from the engine's state once they are here.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("accounts", "0002_relations"),
        ("memories", "0018_erase_stored_secrets"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditChainHead",
                    fields=[
                        ("account", models.OneToOneField(
                            on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                            related_name="+", serialize=False, to="accounts.account")),
                        ("seq", models.BigIntegerField(default=0)),
                        ("hash", models.CharField(max_length=64)),
                    ],
                    options={"db_table": "memories_auditchainhead"},
                ),
                migrations.CreateModel(
                    name="AuditEvent",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True,
                                                   serialize=False, verbose_name="ID")),
                        ("seq", models.BigIntegerField()),
                        ("memory_id", models.BigIntegerField(db_index=True, null=True)),
                        ("memory_name", models.CharField(blank=True, default="",
                                                         max_length=64)),
                        ("partition", models.CharField(max_length=200)),
                        ("action", models.CharField(max_length=64)),
                        ("object_id", models.CharField(blank=True, default="", max_length=64)),
                        ("session_id", models.CharField(blank=True, default="",
                                                        max_length=200)),
                        ("holder_id", models.BigIntegerField(null=True)),
                        ("tool", models.CharField(blank=True, default="", max_length=64)),
                        ("key_id", models.BigIntegerField(null=True)),
                        ("before", models.JSONField(null=True)),
                        ("after", models.JSONField(null=True)),
                        ("created_at", models.DateTimeField()),
                        ("prev_hash", models.CharField(max_length=64)),
                        ("hash", models.CharField(max_length=64)),
                        ("format", models.PositiveSmallIntegerField(default=3)),
                        ("salt", models.CharField(max_length=32, null=True)),
                        ("payload_digest", models.CharField(blank=True, default="",
                                                            max_length=64)),
                        ("erased_at", models.DateTimeField(null=True)),
                        ("account", models.ForeignKey(
                            on_delete=django.db.models.deletion.CASCADE,
                            related_name="audit_events", to="accounts.account")),
                    ],
                    options={
                        "db_table": "memories_auditevent",
                        "indexes": [
                            models.Index(fields=["account", "memory_id", "partition", "seq"],
                                         name="audit_by_partition"),
                            models.Index(fields=["account", "created_at"],
                                         name="audit_by_time"),
                        ],
                        "constraints": [
                            models.UniqueConstraint(fields=("account", "seq"),
                                                    name="audit_seq_per_account"),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
