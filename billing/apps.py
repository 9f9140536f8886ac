from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self) -> None:
        from billing.ledger import LedgerMeter
        from memories import metering

        metering.install(LedgerMeter())
