"""The settings of the live OAuth tests' own server (tests/protocol's oauth_live): the
product's, except that client ID metadata documents are fetched by the test-only fetcher
that may reach this machine (tests/oauth/loopback_fetcher.py). Nothing else uses it."""

from echomem.settings import *  # noqa: F403
from echomem.settings import OAUTH2_PROVIDER

OAUTH2_PROVIDER = {**OAUTH2_PROVIDER,
                   "CIMD_METADATA_FETCHER": "tests.oauth.loopback_fetcher.LoopbackFetcher"}
