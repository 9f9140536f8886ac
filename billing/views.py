"""Stripe's webhook endpoint: a thin adapter over billing.webhooks, answering in JSON."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from billing import webhooks
from billing.stripe_events import MalformedEvent
from echomem.errors import EchoError, PayloadTooLarge


def _refusal(error: EchoError, status: int) -> JsonResponse:
    return JsonResponse({"error": error.as_dict()}, status=status)


@csrf_exempt  # Stripe signs the body instead; there is no browser session to protect.
def stripe_webhook(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        response = _refusal(EchoError(f"{request.method} is not accepted here", field="method",
                                      fix="Stripe POSTs its events to this address"), 405)
        response["Allow"] = "POST"
        return response
    try:
        # Django refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE before reading it.
        payload = request.body
    except RequestDataTooBig:
        return _refusal(PayloadTooLarge(
            f"the body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes, more than "
            "any Stripe event", field="body", fix="send Stripe's event unchanged"), 413)
    try:
        event = webhooks.receive(payload, request.headers.get("Stripe-Signature"))
    except webhooks.WebhookNotConfigured as refusal:
        # 503, not 400: Stripe keeps retrying for days, so events sent before the operator
        # sets the secret are delivered once it is set instead of being lost.
        return _refusal(refusal, 503)
    except (webhooks.BadSignature, MalformedEvent) as refusal:
        return _refusal(refusal, 400)
    except webhooks.HandlingFailed as failure:
        # Stored with its error; a non-2xx answer is what makes Stripe deliver it again.
        return _refusal(failure, 500)
    return JsonResponse({"received": event.id, "outcome": event.outcome})
