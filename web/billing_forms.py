"""The billing page's form: which plan the owner asks Checkout for."""

from __future__ import annotations

from django import forms

from billing.selectors import PLAN_SLUG_CHARS, plan_by_slug

NO_SUCH_PLAN = ("Pick a plan from the list below: the form named no plan this server "
                "sells.")


class CheckoutForm(forms.Form):
    # The slug's own field and length: a NUL, 10,000 characters or bytes that are not
    # UTF-8 are refused here, before any lookup.
    plan = forms.SlugField(max_length=PLAN_SLUG_CHARS,
                           error_messages={"required": NO_SUCH_PLAN, "invalid": NO_SUCH_PLAN,
                                           "max_length": NO_SUCH_PLAN,
                                           "null_characters_not_allowed": NO_SUCH_PLAN})

    def clean_plan(self):
        plan = plan_by_slug(self.cleaned_data["plan"])
        if plan is None:
            raise forms.ValidationError(NO_SUCH_PLAN)
        if not plan.stripe_price_id:
            raise forms.ValidationError(f"The {plan.name} plan cannot be bought here: it has "
                                        "no Stripe price on this server.")
        return plan
