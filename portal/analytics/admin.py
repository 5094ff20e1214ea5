from __future__ import annotations

from django.contrib import admin

from portal.analytics.models import AnalyticsSettings

admin.site.register(AnalyticsSettings)
