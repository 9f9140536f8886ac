"""The subcommands of `memory`, one module per group; agent_cli.cli puts them together."""
