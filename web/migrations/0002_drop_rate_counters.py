# The web limits count in echomem/ratelimit.py (rolling windows, shared with the API doors)
# since issue 37; django-ratelimit's counter table is no longer written.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('web', '0001_rate_counters_and_email_verification'),
    ]

    operations = [
        migrations.DeleteModel(
            name='RateCounter',
        ),
    ]
