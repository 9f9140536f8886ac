"""The subcommands of `echo-memory`, one module per group; echomem.cli puts them together."""
