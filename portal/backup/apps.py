from django.apps import AppConfig


class BackupConfig(AppConfig):
    """Backup and restore of the appliance (``manage.py backup`` / ``restore``): no models."""

    name = "portal.backup"
    label = "backup"
