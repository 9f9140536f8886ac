"""The REST API's settings (api/, docs/api.md), star-imported by echomem.settings: DRF
through the gates both doors share, and drf-spectacular's OpenAPI schema."""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.auth.BearerKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.auth.HasPrincipal"],
    "EXCEPTION_HANDLER": "api.errors.handle_exception",
    # Rate limits are counted by the authentication (echomem/admission.py), as on /mcp.
    "DEFAULT_PARSER_CLASSES": ["api.parsers.JsonBodyParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Echo Memory REST API",
    "DESCRIPTION": "The tools of the MCP endpoint as plain HTTP, plus the memory listing "
                   "and the account's usage. Authenticate with `Authorization: Bearer em_...`.",
    "VERSION": "1",
    # 3.1: the tool schemas come from pydantic, whose optional fields are `type: null` unions.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI comes from the drf-spectacular-sidecar package: no CDN at run time.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # The RateLimit headers on every keyed response, Retry-After on 429 and 503 (api/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "api.schema.declare_rate_limit_headers"],
}
