"""The one place a Stripe client is built: the key, the API version and where Stripe is."""

from __future__ import annotations

import stripe
from django.conf import settings

# The API version every request and every parsed object of this code is written for: the
# version the pinned SDK speaks. A test compares it with `stripe.api_version`, so an SDK
# upgrade that moves the version fails until someone has reviewed the payload changes
# (webhook handlers read fields by name) and moved this line.
STRIPE_API_VERSION = "2026-10-28.endive"


def client() -> stripe.StripeClient:
    """A client for the configured account; STRIPE_API_BASE swaps Stripe for a stand-in."""
    base = settings.STRIPE_API_BASE
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY,
        stripe_version=STRIPE_API_VERSION,
        base_addresses={"api": base} if base else None,
        # Checkout and the portal are asked for while a person waits on a page.
        max_network_retries=1,
    )
