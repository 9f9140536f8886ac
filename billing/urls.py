from django.urls import path

from billing import views

app_name = "billing"

urlpatterns = [
    # Mounted at billing/stripe/: the endpoint to enter in Stripe is /billing/stripe/webhook.
    path("webhook", views.stripe_webhook, name="stripe_webhook"),
]
