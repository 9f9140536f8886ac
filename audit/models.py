"""The audit chain's rows: an account's events and the head that orders its writers.

The tables were created by the engine's migrations (memories 0003, 0004, 0008) and keep
their names: migration audit 0001 moved the models here without touching the database.
"""

from __future__ import annotations

from django.db import models

from audit.limits import SESSION_ID_CHARS

# The columns the audit log filters on that get an (account, column, seq) index.
AUDIT_FILTER_COLUMNS = [("key", "key_id"), ("holder", "holder_id"), ("tool", "tool"),
                        ("action", "action"), ("memory", "memory_id")]


class AuditEvent(models.Model):
    """Append-only record of every mutation; `hash` chains each account's events in order.

    A trigger (memories migrations 0004, 0008) refuses UPDATE and DELETE except erasing a
    memory's text in place (and deleting a whole account), and
    the chain makes an altered or missing row detectable (audit/verify.py). References
    other than the account are plain ids without foreign keys, so deleting a memory,
    key or user never has to rewrite history.
    """

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE,
                                related_name="audit_events")
    seq = models.BigIntegerField()
    # Indexed as it was when it was a foreign key without a constraint (the index that
    # deleting a memory's events reads stayed in the database).
    memory_id = models.BigIntegerField(null=True, db_index=True)
    memory_name = models.CharField(max_length=64, blank=True, default="")
    partition = models.CharField(max_length=200)
    action = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64, blank=True, default="")
    session_id = models.CharField(max_length=SESSION_ID_CHARS, blank=True, default="")
    holder_id = models.BigIntegerField(null=True)
    tool = models.CharField(max_length=64, blank=True, default="")
    key_id = models.BigIntegerField(null=True)
    before = models.JSONField(null=True)
    after = models.JSONField(null=True)
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    # Chain formats 2 and 3 (audit/chain.py): the hash commits to payload_digest, a
    # salted digest of before/after (and, in 3, session_id), so erasing the text (and the
    # salt) keeps the chain whole.
    format = models.PositiveSmallIntegerField(default=3)
    salt = models.CharField(max_length=32, null=True)
    payload_digest = models.CharField(max_length=64, blank=True, default="")
    erased_at = models.DateTimeField(null=True)

    class Meta:
        db_table = "memories_auditevent"
        constraints = [
            models.UniqueConstraint(fields=["account", "seq"], name="audit_seq_per_account"),
        ]
        indexes = [
            models.Index(fields=["account", "memory_id", "partition", "seq"],
                         name="audit_by_partition"),
            models.Index(fields=["account", "created_at"], name="audit_by_time"),
            # The audit log's filters (migration 0002, docs/benchmarks.md "Audit log at
            # scale"): each reads its events newest first by seq, from the index alone.
            *[models.Index(fields=["account", column, "seq"], name=f"audit_by_{name}")
              for name, column in AUDIT_FILTER_COLUMNS],
            # A session id prefix: pattern ops, so LIKE 'prefix%' uses it in any collation.
            models.Index(fields=["account", "session_id", "seq"], name="audit_by_session",
                         opclasses=["int8_ops", "varchar_pattern_ops", "int8_ops"]),
        ]


class AuditChainHead(models.Model):
    """The last link of an account's audit chain; its row lock orders concurrent writers."""

    account = models.OneToOneField("accounts.Account", primary_key=True,
                                   on_delete=models.CASCADE, related_name="+")
    seq = models.BigIntegerField(default=0)
    hash = models.CharField(max_length=64)

    class Meta:
        db_table = "memories_auditchainhead"
