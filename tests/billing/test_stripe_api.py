import stripe

from billing.stripe_api import STRIPE_API_VERSION, client


def test_the_pinned_api_version_is_the_one_the_installed_sdk_speaks():
    # Fails on an SDK upgrade that moves the version: review the webhook handlers' fields,
    # then move STRIPE_API_VERSION.
    assert stripe.api_version == STRIPE_API_VERSION


def test_the_client_talks_to_the_configured_stand_in(settings):
    settings.STRIPE_SECRET_KEY = "sk_test_x"
    settings.STRIPE_API_BASE = "http://127.0.0.1:9"
    built = client()
    assert built._requestor.base_addresses["api"] == "http://127.0.0.1:9"
    settings.STRIPE_API_BASE = ""
    assert client()._requestor.base_addresses.get("api") in (None, "https://api.stripe.com")
