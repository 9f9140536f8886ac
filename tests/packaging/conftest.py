"""The installed box is driven with the same real-process fixtures as the CLI tests."""

from tests.cli.conftest import servers  # noqa: F401
