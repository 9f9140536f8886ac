from django.db import migrations, models


class Migration(migrations.Migration):
    """memory_search embeds its partition's newest waiting notes (memories/search/indexing.py
    settle_notes); this partial index holds only those, so finding them costs one probe."""

    dependencies = [
        ('memories', '0015_fact_first_pass_embedding'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='note',
            index=models.Index(condition=models.Q(('embedding__isnull', True)),
                               fields=['memory', 'partition', 'updated_at'],
                               name='note_waiting'),
        ),
    ]
