import django.contrib.postgres.fields
import django.db.models.deletion
import pgvector.django
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0013_embedding_model_state'),
    ]

    operations = [
        migrations.AddField(
            model_name='note',
            name='words',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), null=True, size=None),
        ),
        migrations.CreateModel(
            name='NoteWord',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('partition', models.CharField(max_length=200)),
                ('word', models.TextField()),
                ('embedding', pgvector.django.HalfVectorField(dimensions=384)),
                ('memory', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.memory')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('memory', 'partition', 'word'), name='note_word_per_partition')],
            },
        ),
        # The indexer stores a note's words when it embeds the note: queue the notes saved
        # before this migration again, so their words are there too.
        migrations.RunSQL("UPDATE memories_note SET embedding = NULL",
                          reverse_sql=migrations.RunSQL.noop),
    ]
