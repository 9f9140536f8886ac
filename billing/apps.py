from django.apps import AppConfig
from django.db.models.signals import pre_delete


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self) -> None:
        from accounts.models import Account
        from billing.cancellation import cancel_on_account_delete
        from billing.ledger import LedgerMeter
        from memories import metering

        metering.install(LedgerMeter())
        pre_delete.connect(cancel_on_account_delete, sender=Account,
                           dispatch_uid="billing.cancel_on_account_delete")
