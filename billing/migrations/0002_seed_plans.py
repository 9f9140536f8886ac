"""The plans the hosted service starts with (billing/plans.py); operators then edit rows."""

from django.db import migrations


def seed(apps, schema_editor):
    from billing.plans import seed_plans

    seed_plans(apps.get_model("billing", "Plan"))


class Migration(migrations.Migration):
    dependencies = [("billing", "0001_ledger")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
