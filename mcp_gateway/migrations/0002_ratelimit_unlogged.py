from django.db import migrations


class Migration(migrations.Migration):
    """Rate-limit hits live for a minute: they need no WAL, and a crash may lose them."""

    dependencies = [("mcp_gateway", "0001_initial")]
    operations = [
        migrations.RunSQL("ALTER TABLE mcp_gateway_ratelimithit SET UNLOGGED",
                          "ALTER TABLE mcp_gateway_ratelimithit SET LOGGED"),
    ]
