from django.apps import AppConfig


class OAuthConfig(AppConfig):
    """The OAuth 2.1 authorization server for MCP connectors, on django-oauth-toolkit."""

    name = "oauth"
    verbose_name = "OAuth connections"

    def ready(self) -> None:
        from django.core.checks import Tags, register

        from accounts.connections import is_access_token, principal_from_access_token
        from accounts.principal import BearerResolver, register_bearer_resolver
        from oauth import checks

        register(checks.public_url_named, Tags.security, deploy=True)
        register(checks.https_issuer, Tags.security, deploy=True)

        # Access tokens are bound to /mcp (RFC 8707); the REST API takes keys only.
        register_bearer_resolver(BearerResolver(
            name="OAuth access tokens", claims=is_access_token,
            resolve=lambda token: principal_from_access_token(token),
            doors=frozenset({"mcp"})))
