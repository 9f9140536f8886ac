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

    code: str = Field(description="invalid_argument, not_found, unauthenticated, rate_limited")
    message: str
    field: str | None = Field(default=None, description="The argument or header at fault.")
    fix: str | None = Field(default=None, description="What to change.")
    retry_after: int | None = Field(default=None, description="429 only: seconds to wait, as "
                                                              "in the Retry-After header.")


class ErrorResponse(BaseModel):
    error: ErrorDetail
