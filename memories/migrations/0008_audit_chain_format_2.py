# Audit chain format 2 (now audit/chain.py): every event commits to a salted digest of its
# before/after instead of the text, so a deleted memory's text can be erased in place
# while the chain still verifies. Existing chains are verified in format 1 first (a
# broken one stops the migration: converting it would launder the tampering), then
# sealed again in format 2, event by event; the trigger gains the one erasure path.

from django.db import connection, migrations, models, transaction

from audit.chain import GENESIS, digest_v1, seal
from audit.verify import verify_events


def _append_only(*allowed: str) -> str:
    """The trigger function of 0004 (only a whole account's erasure may delete), with the
    UPDATE paths this format allows in between."""
    return f"""
CREATE OR REPLACE FUNCTION memories_audit_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('echo_memory.erasing_account', true) = 'on' THEN
        RETURN OLD;
    END IF;{"".join(allowed)}
    RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$ LANGUAGE plpgsql;
"""


# Erasure: only the text and the salt go, and nothing else about the event changes.
TEXT_ERASURE = """
    IF TG_OP = 'UPDATE' AND current_setting('echo_memory.audit_erasing', true) = 'on'
       AND OLD.salt IS NOT NULL AND NEW.salt IS NULL AND NEW.before IS NULL
       AND NEW.after IS NULL AND NEW.erased_at IS NOT NULL
       AND to_jsonb(NEW) - ARRAY['before', 'after', 'salt', 'erased_at']
           = to_jsonb(OLD) - ARRAY['before', 'after', 'salt', 'erased_at'] THEN
        RETURN NEW;
    END IF;"""
# Conversion (this migration): a format-1 event becomes format 2, once.
CONVERSION = """
    IF TG_OP = 'UPDATE' AND current_setting('echo_memory.audit_converting', true) = 'on'
       AND OLD.format = 1 AND NEW.format = 2 THEN
        RETURN NEW;
    END IF;"""
TRIGGER = _append_only(TEXT_ERASURE, CONVERSION)
PREVIOUS_TRIGGER = _append_only()

BATCH = 2000


class BrokenChain(RuntimeError):
    pass


@transaction.atomic  # the setting below lasts for this transaction only
def convert_chains(AuditEvent, AuditChainHead) -> int:
    """Verify every format-1 chain and seal it again in format 2; the events converted."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_converting', 'on', true)")
    converted = 0
    accounts = (AuditEvent.objects.filter(format=1).order_by("account_id")
                .values_list("account_id", flat=True).distinct())
    for account_id in list(accounts):
        old_prev = new_prev = GENESIS
        batch = []
        events = AuditEvent.objects.filter(account_id=account_id).order_by("seq")
        for expected_seq, event in enumerate(events.iterator(chunk_size=BATCH), start=1):
            if (event.format != 1 or event.seq != expected_seq or event.prev_hash != old_prev
                    or digest_v1(old_prev, event) != event.hash):
                raise BrokenChain(
                    f"the audit chain of account {account_id} does not verify at seq "
                    f"{expected_seq}; nothing was converted. Find out what changed it "
                    f"(`echo-memory audit verify --account {account_id}` on the previous "
                    "release) before migrating")
            old_prev = event.hash
            new_prev = seal(event, new_prev)
            batch.append(event)
            if len(batch) == BATCH:
                AuditEvent.objects.bulk_update(
                    batch, ["format", "salt", "payload_digest", "prev_hash", "hash"])
                converted += len(batch)
                batch = []
        AuditEvent.objects.bulk_update(
            batch, ["format", "salt", "payload_digest", "prev_hash", "hash"])
        converted += len(batch)
        head = AuditChainHead.objects.get(account_id=account_id)
        if head.hash != old_prev:
            raise BrokenChain(f"the audit chain of account {account_id} lost events after "
                              "its last row; nothing was converted")
        AuditChainHead.objects.filter(account_id=account_id).update(hash=new_prev)
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('echo_memory.audit_converting', 'off', true)")
    return converted


@transaction.atomic
def convert_back(AuditEvent, AuditChainHead) -> int:
    """Unapplying: seal format-2 chains in format 1 again, if no text was erased yet."""
    with connection.cursor() as cursor:
        # Going back, this runs before the previous trigger function is restored, and the
        # current one lets only format 1 -> 2 through: off for the conversion back.
        cursor.execute("ALTER TABLE memories_auditevent DISABLE TRIGGER "
                       "memories_audit_append_only")
    converted = 0
    for account_id in list(AuditEvent.objects.order_by("account_id")
                           .values_list("account_id", flat=True).distinct()):
        events = list(AuditEvent.objects.filter(account_id=account_id).order_by("seq"))
        if not verify_events(events).ok or any(e.salt is None for e in events):
            raise BrokenChain(f"the audit chain of account {account_id} has erased or altered "
                              "events; it cannot be converted back to format 1")
        prev = GENESIS
        for event in events:
            event.format, event.salt, event.payload_digest = 1, None, ""
            event.prev_hash = prev
            event.hash = prev = digest_v1(prev, event)
        AuditEvent.objects.bulk_update(
            events, ["format", "salt", "payload_digest", "prev_hash", "hash"], batch_size=BATCH)
        AuditChainHead.objects.filter(account_id=account_id).update(hash=prev)
        converted += len(events)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memories_auditevent ENABLE TRIGGER "
                       "memories_audit_append_only")
    return converted


def forwards(apps, schema_editor):
    convert_chains(apps.get_model("memories", "AuditEvent"),
                   apps.get_model("memories", "AuditChainHead"))


def backwards(apps, schema_editor):
    convert_back(apps.get_model("memories", "AuditEvent"),
                 apps.get_model("memories", "AuditChainHead"))


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0007_half_precision_fact_embeddings'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditevent',
            name='erased_at',
            field=models.DateTimeField(null=True),
        ),
        # Rows already written are format 1; new ones are written as 2 by the chain (audit/chain.py).
        migrations.AddField(
            model_name='auditevent',
            name='format',
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AlterField(
            model_name='auditevent',
            name='format',
            field=models.PositiveSmallIntegerField(default=2),
        ),
        migrations.AddField(
            model_name='auditevent',
            name='payload_digest',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='auditevent',
            name='salt',
            field=models.CharField(max_length=32, null=True),
        ),
        migrations.RunSQL(TRIGGER, PREVIOUS_TRIGGER),
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
