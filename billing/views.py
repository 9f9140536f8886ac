"""Stripe's webhook endpoint: a thin adapter over billing.webhooks."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from billing import webhooks


@csrf_exempt  # Stripe signs the body instead; there is no browser session to protect.
@require_POST
def stripe_webhook(request: HttpRequest) -> JsonResponse:
    try:
        event = webhooks.receive(request.body, request.headers.get("Stripe-Signature"))
    except webhooks.WebhookNotConfigured as refusal:
        # 503, not 400: Stripe keeps retrying for days, so events sent before the operator
        # sets the secret are delivered once it is set instead of being lost.
        return JsonResponse({"error": refusal.as_dict()}, status=503)
    except webhooks.BadSignature as refusal:
        return JsonResponse({"error": refusal.as_dict()}, status=400)
    except webhooks.HandlingFailed as failure:
        # Stored with its error; a non-2xx answer is what makes Stripe deliver it again.
        return JsonResponse({"error": failure.as_dict()}, status=500)
    return JsonResponse({"received": event.id, "outcome": event.outcome})
