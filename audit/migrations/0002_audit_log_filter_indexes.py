# The audit log's filters at scale (issue 41): one (account, column, seq) index per filter,
# so each filtered page is read newest first by seq from its index and stops after a page,
# however many events the account holds. docs/benchmarks.md "Audit log at scale" says what
# each serves and what they cost a write.
#
# Built CONCURRENTLY (so not in a transaction): on a live box the table keeps taking writes
# while an index builds. A build that fails leaves an INVALID index behind; running the
# migration again drops nothing by itself, so drop that index by name first.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("accounts", "0011_oauth_connections"),
        ("audit", "0001_initial"),
    ]

    operations = [
        *[AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["account", column, "seq"], name=f"audit_by_{name}"))
          for name, column in [("key", "key_id"), ("holder", "holder_id"), ("tool", "tool"),
                               ("action", "action"), ("memory", "memory_id")]],
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["account", "session_id", "seq"], name="audit_by_session",
                               opclasses=["int8_ops", "varchar_pattern_ops", "int8_ops"])),
    ]
