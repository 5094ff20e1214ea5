from __future__ import annotations

from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "portal.inventory"
    label = "inventory"
    verbose_name = "Inventory"
