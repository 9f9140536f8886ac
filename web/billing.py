"""The billing page: the plan, this month's units, where they went, and the way to a
bigger plan. Every member may look; only owners may buy or manage (Stripe's pages
handle the card). Hosted only: a self-hosted box has no billing, so these are 404s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts.team import Role, email_of
from billing import payments
from billing.ledger import metered
from billing.selectors import has_stripe_customer, plans
from billing.usage import usage_report
from echomem.errors import EchoError, Forbidden
from web.access import Member, member
from web.billing_forms import CheckoutForm
from web.reauth import sensitive
from web.refusals import refusal_text
from web.usage_chart import daily_chart, monthly_chart

# Where the owner's POSTs redirect: CSP's form-action also governs the redirect a form
# submission ends in, so the page that holds these forms allows Stripe's hosted pages.
STRIPE_PAGES = ["https://checkout.stripe.com", "https://billing.stripe.com"]
OWNER_ONLY = "Only an owner of this account can change its plan or billing details."
@dataclass(frozen=True)
class Offer:
    """A plan as the page offers it: `action` is "current", "buy" or "none", and `why`
    says in words why a plan cannot be bought here."""

    plan: Any  # billing.models.Plan
    action: str
    why: str = ""

    @property
    def price(self) -> str:
        """29 or 29.50: the monthly price as shown (Stripe's price is what is charged)."""
        whole, cents = divmod(self.plan.price_cents, 100)
        return f"{whole:,}" if not cents else f"{whole:,}.{cents:02d}"


def _hosted_only() -> None:
    if not metered():
        raise Http404("A self-hosted server has no billing: nothing is metered.")


def _require_owner(role: str) -> None:
    if role != Role.OWNER:
        raise Forbidden(OWNER_ONLY, field="role", fix="ask an owner of this account")


def _offers(current, *, owner: bool, configured: bool) -> list[Offer]:
    offers = []
    for plan in plans():
        if plan.pk == current.pk:
            offers.append(Offer(plan, "current"))
        elif plan.is_default:  # not bought: the account returns to it when a plan ends
            offers.append(Offer(plan, "none", "Cancelling a paid plan under Manage billing "
                                              "returns the account here."))
        elif not configured:
            offers.append(Offer(plan, "none", "Billing is not configured on this server."))
        elif not plan.stripe_price_id:
            offers.append(Offer(plan, "none", "Not for sale on this server."))
        elif not owner:
            offers.append(Offer(plan, "none", OWNER_ONLY))
        elif not current.is_default:  # a second Checkout would be a second subscription
            offers.append(Offer(plan, "none", "Switch under Manage billing: Stripe changes "
                                              "the current subscription and prorates it."))
        else:
            offers.append(Offer(plan, "buy"))
    return offers


def _checkout_return(request: HttpRequest, account, plan) -> tuple[str, str] | None:
    """What the page says on return from Checkout. Anyone can type ?checkout=success, so
    the plan named is the database's, and a payment is only said to have gone through when
    Stripe says so of a session this account started (its id comes back in the address)."""
    outcome = request.GET.get("checkout")
    if outcome == "cancel":
        return ("info", f"Checkout was cancelled. This account is on the {plan.name} plan.")
    if outcome != "success":
        return None
    if not plan.is_default:  # the webhook has often landed before the person is back
        return ("success", f"Thank you: this account is on the {plan.name} plan.")
    state = payments.checkout_state(account=account,
                                    session_id=request.GET.get("session_id", ""))
    if state == "paid":
        return ("success", "Thank you: Stripe confirms the payment. The plan below changes "
                           "as soon as Stripe confirms the subscription to us, usually within "
                           "a minute; reload this page to see it.")
    if state == "unpaid":
        return ("info", f"Checkout was not completed: nothing was charged, and this account "
                        f"is on the {plan.name} plan.")
    return ("info", f"Stripe has not confirmed a payment for this account, which is on the "
                    f"{plan.name} plan. If you have just paid, reload this page in a minute.")


@member(methods=["GET"])
def billing_page(request: HttpRequest, me: Member) -> HttpResponse:
    _hosted_only()
    return _page(request, me)


def _page(request: HttpRequest, me: Member, *, status: int = 200) -> HttpResponse:
    account = me.account
    report = usage_report(me.principal.account_id)
    subscription = report.standing.subscription
    configured = payments.configured()
    owner = me.is_owner
    response = render(request, "web/billing.html", {
        "account": account, "role": me.role,
        "is_owner": owner, "configured": configured, "report": report,
        "standing": report.standing, "subscription": subscription,
        "offers": _offers(report.standing.plan, owner=owner, configured=configured),
        "has_customer": bool(subscription and subscription.stripe_customer_id),
        "daily": daily_chart(report.daily, report.month),
        "monthly": monthly_chart(report.monthly),
        "checkout": _checkout_return(request, account, report.standing.plan),
        "owner_only": OWNER_ONLY,
    }, status=status)
    response._csp_update = {"form-action": STRIPE_PAGES}
    return response


@member(methods=["POST"])
@sensitive(back_to="web:billing")
def billing_checkout(request: HttpRequest, me: Member) -> HttpResponse:
    _hosted_only()
    _require_owner(me.role)
    if not payments.configured():  # whatever the form says, nothing can be bought here
        return _refused(request, payments.BillingNotConfigured("billing is not configured"))
    form = CheckoutForm(request.POST)
    if not form.is_valid():  # the page again, the reason on top: 400, nothing asked of Stripe
        messages.error(request, form.errors["plan"][0])
        return _page(request, me, status=400)
    page = request.build_absolute_uri(reverse("web:billing"))
    try:
        url = payments.checkout_url(
            account=me.account,
            plan=form.cleaned_data["plan"], email=email_of(request.user),
            success_url=f"{page}?{payments.CHECKOUT_RETURN_QUERY}",
            cancel_url=f"{page}?checkout=cancel")
    except EchoError as refused:
        return _refused(request, refused)
    return redirect(url)


@member(methods=["POST"])
@sensitive(back_to="web:billing")
def billing_portal(request: HttpRequest, me: Member) -> HttpResponse:
    _hosted_only()
    _require_owner(me.role)
    account = me.account
    if not payments.configured():
        return _refused(request, payments.BillingNotConfigured("billing is not configured"))
    if not has_stripe_customer(account):
        messages.info(request, "There are no billing details or invoices yet: they appear "
                               "here after the first upgrade.")
        return redirect("web:billing")
    try:
        url = payments.portal_url(account=account,
                                  return_url=request.build_absolute_uri(reverse("web:billing")))
    except EchoError as refused:
        return _refused(request, refused)
    return redirect(url)


def _refused(request: HttpRequest, refused: EchoError) -> HttpResponse:
    if isinstance(refused, payments.BillingNotConfigured):
        messages.error(request, "Billing is not configured on this server, so plans cannot "
                                "be bought or managed here yet.")
    else:
        messages.error(request, refusal_text(refused))
    return redirect("web:billing")
