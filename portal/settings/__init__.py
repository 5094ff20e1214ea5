"""Django settings for the Ostara portal.

Every value that differs between machines comes from the environment through the typed helpers
in ``portal.settings.env``; nothing secret is written here. Groups: ``DATABASE_URL``, ``REDIS_URL``,
``INFLUXDB_*``, ``EMAIL_*``, ``OSTARA_*``.
"""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path
from urllib.parse import urlparse

import dj_database_url

from portal.settings.env import SettingError, env_bool, env_int, env_list, env_rate, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# The run directory holds everything a running appliance writes: the SQLite database, the
# generated secret key and admin password, service data and logs.
RUN_DIR = Path(env_str("OSTARA_RUN_DIR", str(BASE_DIR / ".run" / "demo"))).resolve()


def _secret_key() -> str:
    """The key from the environment, or one generated on first start and kept in RUN_DIR."""
    configured = env_str("OSTARA_SECRET_KEY", "")
    if configured:
        if len(configured) < 32:
            raise SettingError("OSTARA_SECRET_KEY: must be at least 32 characters")
        return configured
    key_file = RUN_DIR / "secret_key"
    if not key_file.exists():
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        # O_EXCL: two processes starting at once must not each write a different key.
        try:
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(50))
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("OSTARA_DEBUG", False)
ALLOWED_HOSTS = env_list("OSTARA_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("OSTARA_CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS in production ------------------------------------------------------------------
# A production appliance is reached only through nginx over HTTPS; the demo and the tests speak
# plain HTTP on 127.0.0.1, so everything that needs HTTPS waits for this switch.
PRODUCTION = env_bool("OSTARA_PRODUCTION", False)
if PRODUCTION and DEBUG:
    raise SettingError("OSTARA_DEBUG: must be off when OSTARA_PRODUCTION is on")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if PRODUCTION:
    # nginx terminates TLS and says so in this header; gunicorn listens on loopback only.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    # A monitoring probe on the management server may ask gunicorn directly.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int("OSTARA_HSTS_SECONDS", 365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("OSTARA_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("OSTARA_HSTS_PRELOAD", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "portal.accounts",
    "portal.alerts",
    "portal.analytics",
    "portal.backup",
    "portal.console",
    "portal.surveys",
    "portal.health",
    "portal.inventory",
    "portal.jobs",
    "portal.usage",
    "portal.wizard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "portal.web.content_security_policy.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After the user is known; static files (WhiteNoise, above) never reach it.
    "portal.web.cache_control.CacheControlMiddleware",
    "portal.accounts.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # After the messages (it leaves one); before any view, so LoginRequired sees the sign-out.
    "portal.accounts.middleware.SessionExpiryMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "portal" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.web.navigation.navigation",
            ],
            # Every page writes sizes and counts through one helper (portal/web/numbers.py).
            "builtins": ["portal.web.number_filters"],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{RUN_DIR / 'ostara.sqlite3'}"),
        conn_max_age=60,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Workers and the portal write at the same time; wait for the lock instead of failing. A
    # transaction takes the write lock as it begins (IMMEDIATE): one that read first and wrote
    # later while another connection committed would fail at once ("database is locked"),
    # the busy timeout not applying, as waiting could deadlock.
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options["timeout"], options["transaction_mode"] = 20, "IMMEDIATE"
    DATABASES["default"]["TEST"] = {"NAME": str(RUN_DIR / "test-ostara.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sign-ins are rate-limited per address (portal.accounts.authentication): after this many
# failures for one user name from one address, or for any names from one address, within the
# window, that address waits the backoff, doubled per further failure up to the maximum.
AUTHENTICATION_BACKENDS = ["portal.accounts.authentication.RateLimitedModelBackend"]
LOGIN_FAILURE_LIMIT = env_int("OSTARA_LOGIN_FAILURE_LIMIT", 5)
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("OSTARA_LOGIN_ADDRESS_FAILURE_LIMIT", 20)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("OSTARA_LOGIN_FAILURE_WINDOW_SECONDS", 3600)
LOGIN_BACKOFF_SECONDS = env_int("OSTARA_LOGIN_BACKOFF_SECONDS", 60)
LOGIN_BACKOFF_MAX_SECONDS = env_int("OSTARA_LOGIN_BACKOFF_MAX_SECONDS", 15 * 60)
for _variable, _value in {
    "OSTARA_LOGIN_FAILURE_LIMIT": LOGIN_FAILURE_LIMIT,
    "OSTARA_LOGIN_ADDRESS_FAILURE_LIMIT": LOGIN_ADDRESS_FAILURE_LIMIT,
    "OSTARA_LOGIN_FAILURE_WINDOW_SECONDS": LOGIN_FAILURE_WINDOW_SECONDS,
    "OSTARA_LOGIN_BACKOFF_SECONDS": LOGIN_BACKOFF_SECONDS,
}.items():
    if _value < 1:
        raise SettingError(f"{_variable}: must be at least 1, got {_value}")
# A pasted `getent passwd` of a large site is megabytes (portal.usage.forms.MAX_UPLOAD_BYTES,
# 16 MiB, with the form's other fields): the form refuses more, naming its field, where
# Django's default of 2.5 MiB would refuse the request before the form is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = 17 * 2**20
# A session ends a working day after sign-in, and after this long without a page asked for
# (0: no idle limit); the dashboard's own refreshes do not keep it alive.
SESSION_COOKIE_AGE = env_int("OSTARA_SESSION_SECONDS", 8 * 3600)
SESSION_IDLE_SECONDS = env_int("OSTARA_SESSION_IDLE_SECONDS", 2 * 3600)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "health:dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env_str("OSTARA_TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = RUN_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "portal" / "static"]
# Front-end libraries come from the npm registry at install time (no build step): only the
# files the pages load are served.
NODE_MODULES = BASE_DIR / "node_modules"
if (NODE_MODULES / "htmx.org" / "dist").is_dir():
    STATICFILES_DIRS.append(("vendor/htmx", NODE_MODULES / "htmx.org" / "dist"))
if (NODE_MODULES / "uplot" / "dist").is_dir():
    STATICFILES_DIRS.append(("vendor/uplot", NODE_MODULES / "uplot" / "dist"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# --- The rack -----------------------------------------------------------------------------
# A virtual rack's directory (simulator/) when the appliance runs on one; empty on real servers.
# It changes only the ansible inventory: the playbooks are the same.
_virtual_rack = env_str("OSTARA_VIRTUAL_RACK", "")
VIRTUAL_RACK = Path(_virtual_rack).resolve() if _virtual_rack else None
ANSIBLE_WORK_DIR = RUN_DIR / "ansible"

# --- Services -----------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:16379/0")
INFLUXDB_URL = env_str("INFLUXDB_URL", "http://127.0.0.1:18086")
INFLUXDB_DATABASE = env_str("INFLUXDB_DATABASE", "ostara")
INFLUXDB_USERNAME = env_str("INFLUXDB_USERNAME", "")
INFLUXDB_PASSWORD = env_str("INFLUXDB_PASSWORD", "")
INFLUXDB_TIMEOUT_SECONDS = env_int("INFLUXDB_TIMEOUT_SECONDS", 5)
# InfluxDB's backup service (the top-level bind-address of its configuration, the RPC port) for
# `manage.py backup` and `restore`.
_influxdb_host = urlparse(INFLUXDB_URL).hostname or "127.0.0.1"
INFLUXDB_BACKUP_ADDRESS = env_str(
    "INFLUXDB_BACKUP_ADDRESS", f"{_influxdb_host}:{env_int('OSTARA_INFLUXDB_RPC_PORT', 18088)}"
)
# Where the sensors on the Lustre servers write: the management server's address as the
# servers reach it (the portal's own INFLUXDB_URL may be a loopback address).
OSTARA_SENSOR_INFLUXDB_URL = env_str("OSTARA_SENSOR_INFLUXDB_URL", INFLUXDB_URL)
OSTARA_SENSOR_INTERVAL = env_int("OSTARA_SENSOR_INTERVAL", 10)
# Seconds between runs of the sensor's slower collectors (each never more often than the
# interval above): the BMC's sensor list (`ipmitool sensor`), both polls of the partner (its BMC
# and PDU), the arrays, the SAS paths (multipath), the heartbeat (corosync) and LNet's state.
OSTARA_BMC_INTERVAL = env_int("OSTARA_BMC_INTERVAL", 60)
OSTARA_PARTNER_INTERVAL = env_int("OSTARA_PARTNER_INTERVAL", 60)
OSTARA_ARRAY_INTERVAL = env_int("OSTARA_ARRAY_INTERVAL", 60)
OSTARA_MULTIPATH_INTERVAL = env_int("OSTARA_MULTIPATH_INTERVAL", 30)
OSTARA_CLUSTER_INTERVAL = env_int("OSTARA_CLUSTER_INTERVAL", 10)
OSTARA_LNET_INTERVAL = env_int("OSTARA_LNET_INTERVAL", 10)
# The arrays' REST collector (issue 33): one sensor process on this management server, with only
# the santricity collector, its points tagged server=OSTARA_ARRAYS_SERVER. Its configuration,
# each array's monitor password file and spool live in OSTARA_ARRAYS_DIR; empty: RUN_DIR/arrays
# (what the production install's ostara-arrays units read), or on a virtual rack its
# arrays-collector/ directory. Provisioning only writes them; the collector follows its files
# by itself.
# OSTARA_ARRAY_CA_FILE: the site's CA for the arrays' certificates; when set, TLS is verified
# against it and no certificate is pinned. It asks every OSTARA_ARRAY_INTERVAL seconds.
OSTARA_ARRAYS_SERVER = env_str("OSTARA_ARRAYS_SERVER", socket.gethostname().split(".")[0])
OSTARA_ARRAYS_DIR = env_str("OSTARA_ARRAYS_DIR", "")
OSTARA_ARRAY_CA_FILE = env_str("OSTARA_ARRAY_CA_FILE", "")
# A drive replacement's job asks the array this often how its reconstruction goes, and gives
# up (the array carries on) after this many hours.
OSTARA_DRIVE_POLL_SECONDS = env_int("OSTARA_DRIVE_POLL_SECONDS", 15)
OSTARA_DRIVE_REBUILD_HOURS = env_int("OSTARA_DRIVE_REBUILD_HOURS", 48)

# --- Celery -------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL
# Shared by the portal's processes for a few seconds (portal.web.shared_cache): chart data that one
# browser's request computed serves the others.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "ostara",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
    }
}
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Provisioning an SSU (formatting 24 OSTs, waiting for Pacemaker) can take hours on real
# hardware; steps report progress themselves, so the limits only stop a hung job.
CELERY_TASK_SOFT_TIME_LIMIT = env_int("OSTARA_TASK_SOFT_TIME_LIMIT", 6 * 3600)
CELERY_TASK_TIME_LIMIT = env_int("OSTARA_TASK_TIME_LIMIT", 6 * 3600 + 300)
# A Redis that hangs (stopped, its disk stalled) costs a page that starts a job seconds, not
# minutes: without a socket timeout sending waits for ever.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + 600,
    "socket_timeout": 5,
    "socket_connect_timeout": 2,
}
CELERY_BEAT_SCHEDULE: dict[str, dict] = {}
CELERY_BEAT_SCHEDULE_FILENAME = str(RUN_DIR / "celerybeat-schedule")
# Running jobs whose worker died are marked interrupted, and jobs Redis did not take are sent
# again, this often (seconds; a worker that starts does it too).
CELERY_BEAT_SCHEDULE["jobs.sweep"] = {
    "task": "jobs.sweep",
    "schedule": float(env_int("OSTARA_JOB_SWEEP_SECONDS", 60)),
    "options": {"expires": 30.0},
}

# --- Health -------------------------------------------------------------------------------
# How often the health engine colours the rack (seconds); sensors report every 10 s.
HEALTH_EVALUATE_SECONDS = env_int("OSTARA_HEALTH_EVALUATE_SECONDS", 10)
# How often the dashboard refreshes itself in the browser (seconds).
HEALTH_REFRESH_SECONDS = env_int("OSTARA_HEALTH_REFRESH_SECONDS", 5)
# How long a chart's data is reused for the next browser that asks for the same chart (seconds):
# twenty dashboards open on one filesystem then cost InfluxDB one query per refresh, not twenty.
HEALTH_CHART_CACHE_SECONDS = env_int("OSTARA_HEALTH_CHART_CACHE_SECONDS", HEALTH_REFRESH_SECONDS)
CELERY_BEAT_SCHEDULE["health.evaluate"] = {
    "task": "health.evaluate",
    "schedule": float(HEALTH_EVALUATE_SECONDS),
    # A backlog of evaluations is useless: each one reads the newest facts anyway.
    "options": {"expires": float(HEALTH_EVALUATE_SECONDS)},
}

# Changes of colour and job logs older than the retention setting (Settings -> Retention) are
# deleted this often (seconds).
CELERY_BEAT_SCHEDULE["health.prune_history"] = {
    "task": "health.prune_history",
    "schedule": float(env_int("OSTARA_PRUNE_HISTORY_SECONDS", 3600)),
    "options": {"expires": 600.0},
}

# --- Analytics ----------------------------------------------------------------------------
# The reports of the last hour, day and week that someone looked at in the last hour are
# computed again this often when due (seconds; portal.analytics.cached).
CELERY_BEAT_SCHEDULE["analytics.refresh"] = {
    "task": "analytics.refresh",
    "schedule": float(env_int("OSTARA_ANALYTICS_REFRESH_SECONDS", 60)),
    "options": {"expires": 60.0},
}

# --- Mail ---------------------------------------------------------------------------------
# Alert mail waiting in the outbox is sent this often (seconds).
CELERY_BEAT_SCHEDULE["alerts.deliver"] = {
    "task": "alerts.deliver",
    "schedule": float(env_int("OSTARA_ALERT_DELIVER_SECONDS", 10)),
    "options": {"expires": 30},
}
EMAIL_HOST = env_str("EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("EMAIL_FROM", "ostara@localhost")
# The default alert rules mail this address until an administrator adds recipients.
OSTARA_ALERT_MAIL_TO = env_str("OSTARA_ALERT_MAIL_TO", "root@localhost")
# Alert grouping (portal.alerts.grouping), seconds: an incident's first mail waits this long
# after its first alert fires; alerts that join later go out together this long after its last.
OSTARA_ALERT_GROUP_WAIT = env_int("OSTARA_ALERT_GROUP_WAIT", 30)
OSTARA_ALERT_GROUP_INTERVAL = env_int("OSTARA_ALERT_GROUP_INTERVAL", 300)
# Links in alert mail point here; Message-IDs of alert mail end in this domain.
OSTARA_PORTAL_URL = env_str("OSTARA_PORTAL_URL", "http://127.0.0.1:8480")
OSTARA_MAIL_DOMAIN = env_str("OSTARA_MAIL_DOMAIN", "ostara.localdomain")
# The demo's mail catcher keeps what it receives here; Settings → Mail shows it. Empty: no
# catcher (a real mail relay is configured).
OSTARA_CAUGHT_MAIL_DIR = env_str("OSTARA_CAUGHT_MAIL_DIR", "")

# --- API ----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Basic first, so an unauthenticated client gets 401 with a challenge, not 403.
        "portal.accounts.authentication.RateLimitedBasicAuthentication",
        # DRF's, but the body is read after the permission check (portal/web/api_requests.py).
        "portal.web.api_requests.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "portal.web.pagination.Pages",
    "PAGE_SIZE": 100,
    # JSON nested past a sane depth is a 400, not a RecursionError.
    "DEFAULT_PARSER_CLASSES": [
        "portal.web.api_requests.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
# Requests per signed-in user (pages and API together) and per address for anonymous API
# clients, as DRF writes a rate; empty for none. Past it: 429 with Retry-After. Far above what
# people do: twenty dashboards of one user on a wall ask about 1000 a minute.
OSTARA_THROTTLE_USER_RATE = env_rate("OSTARA_THROTTLE_USER_RATE", "3000/minute")
OSTARA_THROTTLE_ANON_RATE = env_rate("OSTARA_THROTTLE_ANON_RATE", "300/minute")
REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] = [
    "portal.web.throttling.UserRate",
    "portal.web.throttling.AnonymousRate",
]
MIDDLEWARE.append("portal.web.throttling.PageThrottleMiddleware")
# A parameter read on every server is a short job: its values answer again this long (seconds)
# before asking reads anew, and a user starts this many reads a minute at most.
OSTARA_PARAM_READ_FRESH_SECONDS = env_int("OSTARA_PARAM_READ_FRESH_SECONDS", 30)
OSTARA_PARAM_READS_PER_MINUTE = env_int("OSTARA_PARAM_READS_PER_MINUTE", 10)
SPECTACULAR_SETTINGS = {
    "TITLE": "Ostara API",
    "ENUM_NAME_OVERRIDES": {
        "SurveyScopeEnum": "portal.surveys.choices.Scope",
        "SurveyVerdictEnum": "portal.surveys.choices.Verdict",
        "HealthStatusEnum": "portal.health.choices.Status",
        "HealthNodeKindEnum": "portal.health.choices.NodeKind",
        "JobStateEnum": "portal.jobs.choices.JobState",
        # An alert, an incident and a mail's delivery each have a status of their own.
        "EventStatusEnum": "portal.alerts.choices.EventStatus",
        "IncidentStatusEnum": "portal.alerts.choices.GroupStatus",
        "DeliveryStatusEnum": "portal.alerts.choices.DeliveryStatus",
        # An alert's severity (critical, warning) and a kernel line's (syslog's levels).
        "AlertSeverityEnum": "portal.alerts.choices.Severity",
        "KernelSeverityEnum": "sensors.kmsg.SEVERITIES",
    },
    "DESCRIPTION": "Inventory, jobs, health and metrics of a Lustre rack.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "portal.web.api_schema.document_error_responses",
    ],
    # The schema and its documentation need a login like every other page.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI's scripts and styles come from the portal's own static files.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("OSTARA_LOG_LEVEL", "INFO")},
}
