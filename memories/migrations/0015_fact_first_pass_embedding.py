import pgvector.django.halfvec
from django.db import migrations


class Migration(migrations.Migration):
    """A nullable column: instant on PostgreSQL, whatever the table's size. Facts written
    before it wait for the indexer as they did (found by words only until then)."""

    dependencies = [
        ('memories', '0014_note_word_vectors'),
    ]

    operations = [
        migrations.AddField(
            model_name='fact',
            name='first_pass_embedding',
            field=pgvector.django.halfvec.HalfVectorField(dimensions=384, null=True),
        ),
    ]
