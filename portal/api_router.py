"""One DRF router for the whole API; each app registers its viewsets here."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

urlpatterns = router.urls
