from django.apps import AppConfig


class WebConfig(AppConfig):
    """The browser side: thin views over the same services and selectors as the tools."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "web"
