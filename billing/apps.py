from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_delete


def _plans_after_flush(sender, apps=None, **kwargs) -> None:
    """A database emptied by `flush` (as a transactional test ends) gets the starting plans
    back, as Django gives contenttypes back; one that has plans is left as its operator
    edited it (a deleted plan stays deleted)."""
    from billing.models import Plan
    from billing.plans import seed_plans

    try:  # migrate passes the migrated state's models; flush passes none
        plan_model = apps.get_model("billing", "Plan") if apps is not None else Plan
    except LookupError:  # migrated back to before the plans existed
        return
    if not plan_model.objects.exists():
        seed_plans(plan_model)


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self) -> None:
        from accounts.models import Account
        from billing.cancellation import cancel_on_account_delete
        from billing.ledger import LedgerMeter
        from billing.rates import requests_per_minute
        from echomem import admission
        from memories.core import metering

        metering.install(LedgerMeter())
        admission.install_plan_rate(requests_per_minute)
        pre_delete.connect(cancel_on_account_delete, sender=Account,
                           dispatch_uid="billing.cancel_on_account_delete")
        post_migrate.connect(_plans_after_flush, sender=self,
                             dispatch_uid="billing.plans_after_flush")
