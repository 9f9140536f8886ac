from django.apps import AppConfig


class ConformanceAppConfig(AppConfig):
    """The official MCP conformance suite's fixtures: installed by tests/conformance_settings.py
    alone, never by the product's settings."""

    name = "tests.conformance_app"
    label = "conformance_app"
    verbose_name = "MCP conformance fixtures (tests only)"

    def ready(self) -> None:
        from tests.conformance_app.tools import install

        install()
