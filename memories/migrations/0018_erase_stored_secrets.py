# Secrets stored before redaction covered every tool's free text (issue 37): redacted in the
# plain columns, erased from the audit trail through the one erasure path, the chains still
# verifying (memories/erasure/stored_secrets.py). Audit chain format 3 puts an event's session_id
# under its salted payload digest, so erasure can blank it too; the trigger learns that, and
# the resealing that turns a format-2 event whose session id holds a secret into format 3.

from django.db import migrations, models

from memories.erasure.stored_secrets import erase_stored_secrets


def _append_only(*allowed: str) -> str:
    """The trigger function of 0004 (only a whole account's erasure may delete), with the
    UPDATE paths allowed in between."""
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


_TEXT = "ARRAY['before', 'after', 'salt', 'erased_at', 'session_id']"
# Erasure: the text and the salt go, and a format-3 event's session id; nothing else changes.
TEXT_ERASURE = f"""
    IF TG_OP = 'UPDATE' AND current_setting('echo_memory.audit_erasing', true) = 'on'
       AND OLD.salt IS NOT NULL AND NEW.salt IS NULL AND NEW.before IS NULL
       AND NEW.after IS NULL AND NEW.erased_at IS NOT NULL
       AND (NEW.session_id = OLD.session_id OR (OLD.format >= 3 AND NEW.session_id = ''))
       AND to_jsonb(NEW) - {_TEXT} = to_jsonb(OLD) - {_TEXT} THEN
        RETURN NEW;
    END IF;"""
_SEAL = "ARRAY['format', 'payload_digest', 'prev_hash', 'hash', 'session_id']"
# Resealing (memories/erasure/stored_secrets.py): an event is linked to its new predecessor; a
# format-2 event becomes format 3 with its text kept (a new payload digest), or, already
# erased, with its session id blanked. Nothing else about any event changes.
RESEALING = f"""
    IF TG_OP = 'UPDATE' AND current_setting('echo_memory.audit_resealing', true) = 'on'
       AND to_jsonb(NEW) - {_SEAL} = to_jsonb(OLD) - {_SEAL}
       AND ((NEW.format = OLD.format AND NEW.payload_digest = OLD.payload_digest
             AND NEW.session_id = OLD.session_id)
            OR (OLD.format = 2 AND NEW.format = 3 AND OLD.salt IS NOT NULL
                AND NEW.session_id = OLD.session_id)
            OR (OLD.format = 2 AND NEW.format = 3 AND OLD.salt IS NULL
                AND NEW.session_id = '' AND NEW.payload_digest = OLD.payload_digest)) THEN
        RETURN NEW;
    END IF;"""
# 0008's conversion of format-1 chains, kept as it was.
CONVERSION = """
    IF TG_OP = 'UPDATE' AND current_setting('echo_memory.audit_converting', true) = 'on'
       AND OLD.format = 1 AND NEW.format = 2 THEN
        RETURN NEW;
    END IF;"""
TRIGGER = _append_only(TEXT_ERASURE, CONVERSION, RESEALING)

# 0008's, restored when this migration is unapplied (the erased text stays erased).
PREVIOUS_TRIGGER = _append_only("""
    IF TG_OP = 'UPDATE' AND current_setting('echo_memory.audit_erasing', true) = 'on'
       AND OLD.salt IS NOT NULL AND NEW.salt IS NULL AND NEW.before IS NULL
       AND NEW.after IS NULL AND NEW.erased_at IS NOT NULL
       AND to_jsonb(NEW) - ARRAY['before', 'after', 'salt', 'erased_at']
           = to_jsonb(OLD) - ARRAY['before', 'after', 'salt', 'erased_at'] THEN
        RETURN NEW;
    END IF;""", CONVERSION)


def forwards(apps, schema_editor):
    # Today's code, like 0008's: the redaction rules and the chain formats are the ones
    # this release knows.
    erase_stored_secrets()


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0017_fact_first_pass_from_model"),
        ("accounts", "0005_account_redaction"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditevent",
            name="format",
            field=models.PositiveSmallIntegerField(default=3),
        ),
        migrations.RunSQL(TRIGGER, PREVIOUS_TRIGGER),
        migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False),
    ]
