from __future__ import annotations

from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "portal.inventory"
    label = "inventory"
    verbose_name = "Inventory"

    def ready(self) -> None:
        # Registers the provisioning job kind with portal.jobs.
        from portal.inventory import provisioning  # noqa: F401
