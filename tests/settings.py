"""Test settings: the product's settings on services started for this session."""

import os

from tests import harness

os.environ.pop("DATABASE_URL", None)  # tests always run on their own embedded server
os.environ.setdefault("SECRET_KEY", "test-only-" + "k" * 64)
os.environ["ECHO_MEMORY_HOME"] = str(harness.start_postgres())
harness.ensure_redis()

from echomem.settings import *  # noqa: E402,F403

# The hosted shape is the default under test; self-hosted behaviour is opted into per test.
SELF_HOSTED = False
SELF_HOSTED_USER_ID = ""
SELF_HOSTED_AGENT_ID = ""
OPEN_SIGNUP = True
# Index right after each write commits, so live-server tests see facts by meaning at once.
ECHO_MEMORY_INDEXING = "inline"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
# Rate-limit windows of this run only: Redis outlives a run, key ids restart with each one.
RATE_LIMIT_REDIS_PREFIX = f"echo-test:{os.getpid()}:{os.urandom(4).hex()}:rl:"
# Email verification is opted into per test (tests/web/test_email_verification.py), so the
# other tests' new sign-ups may create keys at once.
VERIFY_EMAIL = False
