from __future__ import annotations

from django.contrib import admin

from portal.surveys.models import Survey


@admin.register(Survey)
class SurveyAdmin(admin.ModelAdmin):
    list_display = ("id", "pair", "scope", "verdict", "created", "created_by")
    list_filter = ("verdict", "scope", "acceptance")
