"""The alerts API: rules (operators write, everyone reads), events (list, acknowledge) and
silences."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from portal.accounts.permissions import OperatorWrites
from portal.alerts.api.serializers import (
    AcknowledgeSerializer,
    EventSerializer,
    RuleSerializer,
    SilenceSerializer,
)
from portal.alerts.choices import EventStatus
from portal.alerts.models import Event, Rule, Silence
from portal.alerts.services.evaluation import acknowledge, retire


class RuleViewSet(viewsets.ModelViewSet):
    queryset = Rule.objects.prefetch_related("recipients")
    serializer_class = RuleSerializer
    permission_classes = [OperatorWrites]

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)

    def perform_destroy(self, instance):
        retire(instance)


class EventViewSet(viewsets.ReadOnlyModelViewSet):
    """Events newest first; ?status=firing, ?severity=critical, ?object=oss03 filter them."""

    queryset = (
        Event.objects.exclude(status=EventStatus.PENDING)
        .select_related("rule", "acknowledged_by")
        .prefetch_related("transitions")
    )
    serializer_class = EventSerializer
    permission_classes = [OperatorWrites]

    def get_queryset(self):
        events = super().get_queryset()
        params = self.request.query_params
        if value := params.get("status"):
            events = events.filter(status=value)
        if value := params.get("severity"):
            events = events.filter(severity=value)
        if value := params.get("object"):
            events = events.filter(object_label__icontains=value)
        return events

    @extend_schema(request=AcknowledgeSerializer, responses=EventSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        event = self.get_object()
        body = AcknowledgeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            acknowledge(event, request.user, body.validated_data.get("comment", ""))
        except ValueError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response(EventSerializer(event).data)


class SilenceViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    queryset = Silence.objects.select_related("created_by")
    serializer_class = SilenceSerializer
    permission_classes = [OperatorWrites]

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)
