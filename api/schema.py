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
