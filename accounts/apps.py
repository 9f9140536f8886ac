from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and API keys"

    def ready(self) -> None:
        from accounts import session_signals

        session_signals.connect()
