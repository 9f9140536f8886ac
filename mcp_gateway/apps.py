from django.apps import AppConfig


class McpGatewayConfig(AppConfig):
    name = "mcp_gateway"
    verbose_name = "MCP gateway"

    def ready(self) -> None:
        from mcp_gateway import checks  # noqa: F401  (registers the deploy check)
