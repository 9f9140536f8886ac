from django.apps import AppConfig


class PostgresRulesConfig(AppConfig):
    """What this project asks of PostgreSQL beyond Django's backend (text_lookups.py)."""

    name = "echomem.postgres"
    label = "echo_postgres"
    verbose_name = "PostgreSQL rules"

    def ready(self) -> None:
        from echomem.postgres import text_lookups

        text_lookups.register()
