from __future__ import annotations

from django.db import models


class WizardStep(models.TextChoices):
    FILESYSTEM = "filesystem", "Filesystem"
    SERVERS = "servers", "Servers"
    ARRAYS = "arrays", "Arrays"
    REVIEW = "review", "Review and confirm"


class FilesystemMode(models.TextChoices):
    EXISTING = "existing", "Add an SSU to an existing filesystem"
    NEW = "new", "Create a new filesystem (its MDS pair and MDT array first)"
