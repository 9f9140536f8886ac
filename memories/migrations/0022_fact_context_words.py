"""Facts keep the words of the facts written just before them in their episode
(Fact.context_vector), which the word search counts at a lower weight
(candidates.CONTEXT_WORD_WEIGHT). New facts get them when written; this fills them for the
facts a box already holds, from the table (one statement; the column has no index).

The context is the one the indexer embeds a fact with (memories/search/storing.py,
_CONTEXT_OF): the search texts of the facts at up to ECHO_MEMORY_EMBED_CONTEXT positions
before it in its episode, in order. Frozen here as this migration shipped
(tests/engine/test_migrations.py holds it equal to what a write stores).
"""

import django.contrib.postgres.search
from django.conf import settings
from django.db import migrations

FILL = (
    "UPDATE memories_fact t SET context_vector = c.words FROM (SELECT f.id, "
    "strip(to_tsvector('english', string_agg(p.search_text, ' ' ORDER BY p.position))) "
    "AS words FROM memories_fact f JOIN memories_fact p ON p.episode_id = f.episode_id "
    "AND p.position BETWEEN f.position - %s AND f.position - 1 GROUP BY f.id) c "
    "WHERE t.id = c.id"
)


def fill(apps, schema_editor):
    schema_editor.execute(FILL, [settings.ECHO_MEMORY_EMBED_CONTEXT])


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0021_fact_first_embedding_layout'),
    ]

    operations = [
        migrations.AddField(
            model_name='fact',
            name='context_vector',
            field=django.contrib.postgres.search.SearchVectorField(null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
