import django.db.models.deletion
from django.db import migrations, models

# Before this field, the account default was the memory named `default`.
BACKFILL = """
UPDATE accounts_account AS account SET default_memory_id = memory.id
FROM memories_memory AS memory
WHERE memory.account_id = account.id AND memory.name = 'default'
"""


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0002_relations'),
        ('memories', '0002_memory'),
    ]

    operations = [
        migrations.AddField(
            model_name='account',
            name='default_memory',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='default_of', to='memories.memory'),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
