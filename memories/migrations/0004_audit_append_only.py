from django.db import migrations

APPEND_ONLY = """
CREATE FUNCTION memories_audit_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('echo_memory.erasing_account', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER memories_audit_append_only
    BEFORE UPDATE OR DELETE ON memories_auditevent
    FOR EACH ROW EXECUTE FUNCTION memories_audit_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS memories_audit_append_only ON memories_auditevent;
DROP FUNCTION IF EXISTS memories_audit_append_only();
"""


class Migration(migrations.Migration):
    """History cannot be edited in place; only erasing a whole account may delete it."""

    dependencies = [("memories", "0003_graph")]
    operations = [migrations.RunSQL(APPEND_ONLY, DROP)]
