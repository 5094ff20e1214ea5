"""The alerts API: rules (operators write, everyone reads), incidents (the alerts that share a
cause, mailed as one: list, acknowledge), events (list, acknowledge) and silences."""

from __future__ import annotations

from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from portal.accounts.permissions import OperatorWrites
from portal.alerts.api.serializers import (
    AcknowledgeSerializer,
    EventSerializer,
    IncidentSerializer,
    RuleSerializer,
    SilenceSerializer,
)
from portal.alerts.choices import EventStatus, GroupStatus, Severity
from portal.alerts.models import Event, GroupMail, IncidentGroup, Rule, Silence
from portal.alerts.services.evaluation import acknowledge, retire
from portal.alerts.services.incidents import acknowledge_group


class RuleViewSet(viewsets.ModelViewSet):
    queryset = Rule.objects.prefetch_related("recipients")
    serializer_class = RuleSerializer
    permission_classes = [OperatorWrites]

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)

    def perform_destroy(self, instance):
        retire(instance)


def _choice(params, name: str, choices) -> str:
    """A filter's value, one of ``choices``; anything else is refused naming the field."""
    value = params.get(name, "")
    if value and value not in choices.values:
        raise ValidationError({name: [f"{value!r} is not one of {', '.join(choices.values)}"]})
    return value


class IncidentViewSet(viewsets.ReadOnlyModelViewSet):
    """Incidents newest first, each with its alerts (the causes first, the muted after them)
    and the mails it sent; ?status=firing (pending: waiting out the group wait, not mailed
    yet), ?severity=critical filter them. POST ``{id}/acknowledge/`` acknowledges the
    incident and each of its firing alerts."""

    queryset = IncidentGroup.objects.select_related("acknowledged_by").prefetch_related(
        Prefetch("events", queryset=Event.objects.select_related("rule", "acknowledged_by")),
        Prefetch("mails", queryset=GroupMail.objects.prefetch_related("deliveries")),
    )
    serializer_class = IncidentSerializer
    permission_classes = [OperatorWrites]

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=GroupStatus.values),
            OpenApiParameter("severity", str, enum=Severity.values),
        ]
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        groups = super().get_queryset()
        if self.action != "list":
            return groups
        params = self.request.query_params
        if value := _choice(params, "status", GroupStatus):
            groups = groups.filter(status=value)
        if value := _choice(params, "severity", Severity):
            groups = groups.filter(severity=value)
        return groups

    @extend_schema(request=AcknowledgeSerializer, responses=IncidentSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        group = self.get_object()
        return _acknowledged(
            request,
            lambda comment: acknowledge_group(group, request.user, comment),
            lambda: self.get_serializer(self.get_queryset().get(pk=group.pk)),
        )


def _acknowledged(request, act, answer) -> Response:
    """Run ``act(comment)`` with the body's comment; answer with ``answer()``'s data, or 409
    with the reason it was refused."""
    body = AcknowledgeSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        act(body.validated_data.get("comment", ""))
    except ValueError as error:
        return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
    return Response(answer().data)


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
        return _acknowledged(
            request,
            lambda comment: acknowledge(event, request.user, comment),
            lambda: EventSerializer(event),
        )


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
