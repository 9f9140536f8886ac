"""OpenAPI pieces drf-spectacular cannot infer: our Bearer scheme and the error shape."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from pydantic import BaseModel, ConfigDict, Field


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "api.auth.BearerKeyAuthentication"
    name = "bearerKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API key from the dashboard: `Authorization: Bearer em_...`"}


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: str = Field(description="invalid_argument, invalid_import, invalid_json, "
                                  "invalid_request, "
                                  "unauthenticated, forbidden, not_found, method_not_allowed, "
                                  "payload_too_large, rate_limited, allowance_exhausted, timeout, "
                                  "internal_error")
    message: str
    field: str | None = Field(default=None, description="The argument, header or `body` at "
                                                        "fault.")
    fix: str | None = Field(default=None, description="What to change.")
    line: int | None = Field(default=None, description="invalid_import only: the line of "
                                                       "the file at fault (1 is the header).")
    retry_after: int | None = Field(default=None, description="429 only: seconds to wait, as "
                                                              "in the Retry-After header.")
    used: int | None = Field(default=None, description="402 only: units used this month.")
    allowed: int | None = Field(default=None, description="402 only: the plan's monthly units.")
    resets_at: str | None = Field(default=None, description="402 only: when the month's units "
                                                            "reset (UTC).")
    upgrade_url: str | None = Field(default=None, description="402 only: where to upgrade.")
    reference: str | None = Field(default=None, description="500 only: the reference the "
                                                            "server logged the fault under.")


class ErrorResponse(BaseModel):
    error: ErrorDetail


# Every status an endpoint may answer besides its success, each in the one error shape.
ERROR_RESPONSES = {status: ErrorResponse for status in (400, 401, 402, 403, 404, 405, 413, 415,
                                                        429, 500, 503)}


# The headers every reply of a counted request carries (echomem/ratelimit_headers.py says
# which and why), declared once under components and referenced from each response: the
# view decorators cannot say "every response of every operation", a hook can. 401 and 403
# are refused before the key's window and carry none; a 429 of the per-address window
# (a bad key) carries only Retry-After, so none of them is `required`.
_WINDOW = "the key's window (every request of the key at /mcp and /api/v1 counts)"
RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": ("string", 'The quota and its window in seconds, e.g. `"key";q=240;w=60` '
                                   "(draft-ietf-httpapi-ratelimit-headers)."),
    "RateLimit": ("string", 'What is left of ' + _WINDOW + ' and the seconds until it next '
                            'grows, e.g. `"key";r=12;t=5`.'),
    "RateLimit-Limit": ("integer", "Requests a rolling window takes (the draft's earlier form)."),
    "RateLimit-Remaining": ("integer", f"Requests left in {_WINDOW}."),
    "RateLimit-Reset": ("integer", "Seconds until the oldest counted request leaves the window "
                                   "and Remaining grows."),
}
RETRY_AFTER = {"schema": {"type": "integer"},
               "description": "Seconds to wait before sending the request again."}
_BEFORE_THE_WINDOW = {"401", "403"}


def declare_rate_limit_headers(result, generator, request, public):
    """drf-spectacular postprocessing hook: the RateLimit headers on each response of each
    keyed operation, and Retry-After on 429 and 503."""
    components = result.setdefault("components", {}).setdefault("headers", {})
    for name, (kind, description) in RATE_LIMIT_HEADERS.items():
        components[name] = {"schema": {"type": kind}, "description": description}
    components["Retry-After"] = RETRY_AFTER
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or not operation.get("security"):
                continue
            for status, response in operation.get("responses", {}).items():
                headers = response.setdefault("headers", {})
                if status not in _BEFORE_THE_WINDOW:
                    headers.update({name: {"$ref": f"#/components/headers/{name}"}
                                    for name in RATE_LIMIT_HEADERS})
                if status in ("429", "503"):
                    headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
                if not headers:
                    del response["headers"]
    return result
