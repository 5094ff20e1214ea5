"""One DRF router for the whole API; each app lists its viewsets in ``api/urls.py`` ROUTES."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from portal.inventory.api.urls import ROUTES as INVENTORY_ROUTES
from portal.jobs.api.urls import ROUTES as JOB_ROUTES

router = DefaultRouter()
for prefix, viewset in INVENTORY_ROUTES + JOB_ROUTES:
    router.register(prefix, viewset)

urlpatterns = router.urls
