from django.apps import AppConfig


class ToolsConfig(AppConfig):
    # An app only so that `manage.py tool_docs` is found; it has no models.
    name = "tools"
