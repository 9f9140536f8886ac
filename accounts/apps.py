from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and API keys"

    def ready(self) -> None:
        from django.core import checks

        from accounts.passkeys import public_url_is_an_address

        checks.register(public_url_is_an_address)

        from accounts import second_factor_reauth, session_signals

        session_signals.connect()
        second_factor_reauth.register()
