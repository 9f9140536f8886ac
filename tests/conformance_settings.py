"""The settings of the conformance run's own server (tests/protocol's conformance_live):
the product's settings plus the test-only app that serves the MCP conformance suite's
fixtures. Nothing else installs that app."""

from echomem.settings import *  # noqa: F403
from echomem.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.conformance_app.apps.ConformanceAppConfig"]
