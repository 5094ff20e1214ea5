from __future__ import annotations

from rest_framework import viewsets

from portal.jobs.api.serializers import JobSerializer
from portal.jobs.models import Job


class JobViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Job.objects.select_related("created_by").prefetch_related("steps", "pairs")
    serializer_class = JobSerializer
