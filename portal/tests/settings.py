"""The settings `make test` runs the portal with: the product's own, with a fast password hash.

PBKDF2 costs about a second a password on these machines by design, and every test user, login
and Basic-auth request paid it: minutes of the suite. The test settings hash with MD5 first
(never shipped: only pytest and the processes it starts, which inherit DJANGO_SETTINGS_MODULE,
load this module) and keep the product's hashers after it, so a password the product hashed
still checks."""

from django.conf import global_settings

from portal.settings import *  # noqa: F403

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.MD5PasswordHasher",
    *global_settings.PASSWORD_HASHERS,
]
