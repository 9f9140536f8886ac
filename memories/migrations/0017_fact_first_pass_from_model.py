from django.db import migrations, models


class Migration(migrations.Migration):
    """A column with a constant default: instant on PostgreSQL, whatever the table's size."""

    dependencies = [
        ('memories', '0016_note_waiting'),
    ]

    operations = [
        migrations.AddField(
            model_name='fact',
            name='first_pass_from_model',
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
