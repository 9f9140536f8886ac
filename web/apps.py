from django.apps import AppConfig


class WebConfig(AppConfig):
    """The browser side: thin views over the same services and selectors as the tools."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "web"

    def ready(self) -> None:
        # What a session owes is worked out at every sign-in (a signal receiver there).
        from web import second_factor_gate, time_zones  # noqa: F401
