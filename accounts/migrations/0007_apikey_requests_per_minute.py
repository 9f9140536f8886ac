import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0006_sign_in_name_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="requests_per_minute",
            field=models.PositiveIntegerField(
                blank=True, null=True,
                help_text="Requests per rolling minute for this key, /mcp and /api/v1 "
                          "together, on a self-hosted box. Empty: the box's default (240).",
                validators=[django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(100000)]),
        ),
    ]
