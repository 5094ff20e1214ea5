"""The console's API: every act the pages offer, with the same checks and roles, the audit
log (read only), and parameter reads (a short job: 202 while it runs, 200 with the values).

An act answers 202 with the job and the audit entry; 400 naming the field; 409 with
``refused`` (the reasons) or, without ``confirm: true``, with ``proposal`` (what it would do:
for a cluster act, which targets move where according to Pacemaker).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.response import Response

from portal.accounts.permissions import OperatorWrites
from portal.console.api.serializers import (
    AuditEntrySerializer,
    ClusterActSerializer,
    ConfirmSerializer,
    DriveActSerializer,
    MaintenanceSerializer,
    ReadingSerializer,
    ReadingUnderWaySerializer,
    ReadParamSerializer,
    SetParamSerializer,
)
from portal.console.choices import Act, ObjectKind, Via
from portal.console.forms import AuditFilterForm
from portal.console.models import AuditEntry
from portal.console.services import (
    Author,
    ConfirmationNeeded,
    ConsoleError,
    Refused,
    cluster,
    drives,
    params,
)
from portal.console.views import filter_entries
from portal.inventory.models import Filesystem, StorageArray

# An act's answers besides 400 (a field refused) and 401/403/404, which every operation has.
ACT_RESPONSES = {
    202: OpenApiResponse(description="started: the job, its title and the audit entry"),
    409: OpenApiResponse(
        description="refused (the reasons), or, without confirm: true, the proposal"
    ),
}


def _validated(serializer_class, request) -> dict:
    """The request's body checked by the serializer (400 naming each field otherwise)."""
    body = serializer_class(data=request.data)
    body.is_valid(raise_exception=True)
    return body.validated_data


def _answer(call) -> Response:
    try:
        job = call()
    except ConfirmationNeeded as needed:
        proposal = needed.proposal
        return Response(
            {
                "confirm": ["send confirm: true to go ahead"],
                "proposal": {
                    "title": proposal.title,
                    "lines": proposal.lines,
                    "warnings": proposal.warnings,
                    "commands": proposal.commands,
                },
            },
            status=status.HTTP_409_CONFLICT,
        )
    except Refused as refused:
        return Response(
            {refused.field: refused.reasons, "refused": refused.reasons},
            status=status.HTTP_409_CONFLICT,
        )
    except ConsoleError as error:
        return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
    entry = job.audit_entries.first()
    return Response(
        {"job": job.pk, "title": job.title, "audit": entry.pk if entry else None},
        status=status.HTTP_202_ACCEPTED,
    )


class ConsoleViewSet(viewsets.ViewSet):
    """POST /api/v1/console/{failover,failback,maintenance,drive,set-param}/ and
    GET /api/v1/console/parameters/?filesystem=&name="""

    permission_classes = [OperatorWrites]

    def _cluster(self, request, act: str) -> Response:
        data = _validated(ClusterActSerializer, request)
        kind = ObjectKind.SERVER if data.get("server") else ObjectKind.TARGET

        def call():
            subject = cluster.subject_of(kind, data.get("server") or data.get("target"))
            return cluster.start(
                act,
                subject,
                Author.of_request(request, Via.API),
                confirmed=data["confirm"],
                lifetime=data.get("lifetime"),
            )

        return _answer(call)

    @extend_schema(request=ClusterActSerializer, responses=ACT_RESPONSES)
    @action(detail=False, methods=["post"])
    def failover(self, request):
        return self._cluster(request, Act.FAILOVER)

    @extend_schema(request=ClusterActSerializer, responses=ACT_RESPONSES)
    @action(detail=False, methods=["post"])
    def failback(self, request):
        return self._cluster(request, Act.FAILBACK)

    @extend_schema(request=MaintenanceSerializer, responses=ACT_RESPONSES)
    @action(detail=False, methods=["post"])
    def maintenance(self, request):
        data = _validated(MaintenanceSerializer, request)

        def call():
            subject = cluster.subject_of(ObjectKind.SERVER, data["server"])
            return cluster.start(
                Act.MAINTENANCE_START if data["on"] else Act.MAINTENANCE_END,
                subject,
                Author.of_request(request, Via.API),
                confirmed=data["confirm"],
                hours=data.get("hours"),
                reason=data.get("reason", ""),
            )

        return _answer(call)

    @extend_schema(request=DriveActSerializer, responses=ACT_RESPONSES)
    @action(detail=False, methods=["post"])
    def drive(self, request):
        data = _validated(DriveActSerializer, request)

        def call():
            array = StorageArray.objects.filter(name=data["array"]).first()
            if array is None:
                raise ConsoleError("array", f"no array named {data['array']!r}")
            drive = drives.drive_at(array, data["drive"])
            if drive is None:
                raise ConsoleError("drive", f"no drive {data['drive']} in {array.name}")
            author = Author.of_request(request, Via.API)
            if data["step"] == "locate":
                return drives.start_locate(drive, author, confirmed=data["confirm"])
            return drives.start_replacement(drive, author, confirmed=data["confirm"])

        return _answer(call)

    @extend_schema(request=SetParamSerializer, responses=ACT_RESPONSES)
    @action(detail=False, methods=["post"], url_path="set-param")
    def set_param(self, request):
        data = _validated(SetParamSerializer, request)

        def call():
            filesystem = Filesystem.objects.filter(name=data["filesystem"]).first()
            if filesystem is None:
                raise ConsoleError("filesystem", f"no filesystem named {data['filesystem']!r}")
            return params.start_set(
                filesystem,
                data["name"],
                data["value"],
                Author.of_request(request, Via.API),
                hosts=data.get("servers"),
                permanent=data["permanent"],
                confirmed=data["confirm"],
            )

        return _answer(call)

    @extend_schema(
        parameters=[ReadParamSerializer],
        responses={200: ReadingSerializer, 202: ReadingUnderWaySerializer},
    )
    @action(detail=False, methods=["get"])
    def parameters(self, request):
        """A parameter on every server of the filesystem, as lctl get_param prints it. Read by a
        short job: 202 with the job while it runs (ask again at ``poll``), then 200 with the
        values and their age until they are no longer fresh, when asking starts a new read.
        429 with Retry-After once the user has started as many reads as a minute allows."""
        query = ReadParamSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filesystem = Filesystem.objects.filter(name=query.validated_data["filesystem"]).first()
        if filesystem is None:
            return Response({"filesystem": ["no such filesystem"]}, status=400)
        try:
            reading = params.request_reading(
                filesystem, query.validated_data["name"], Author.of_request(request, Via.API)
            )
        except params.ReadsTooOften as refusal:
            raise Throttled(wait=refusal.retry_after, detail=str(refusal)) from None
        except ConsoleError as error:
            return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        if reading.finished:
            return Response(ReadingSerializer(reading).data)
        reading.poll = request.build_absolute_uri(request.get_full_path())
        return Response(ReadingUnderWaySerializer(reading).data, status=status.HTTP_202_ACCEPTED)


class AuditEntryViewSet(viewsets.ReadOnlyModelViewSet):
    """The audit log: list (filters ``user``, ``act``, ``object``, ``since``, ``until``) and
    read; no entry can be changed or deleted. POST ``{id}/revert/`` puts a parameter back."""

    queryset = AuditEntry.objects.select_related("job")
    serializer_class = AuditEntrySerializer
    permission_classes = [OperatorWrites]

    @extend_schema(
        parameters=[
            OpenApiParameter("user", str),
            OpenApiParameter("act", str),
            OpenApiParameter("object", str),
            OpenApiParameter("since", str, description="YYYY-MM-DD"),
            OpenApiParameter("until", str, description="YYYY-MM-DD"),
        ]
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action != "list":
            return queryset
        form = AuditFilterForm(self.request.query_params)
        if not form.is_valid():
            raise ValidationError(form.errors)
        return filter_entries(queryset, **form.cleaned_data)

    @extend_schema(request=ConfirmSerializer, responses=ACT_RESPONSES)
    @action(detail=True, methods=["post"])
    def revert(self, request, pk=None):
        entry = self.get_object()
        body = ConfirmSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        author = Author.of_request(request, Via.API)
        return _answer(
            lambda: params.start_revert(entry, author, confirmed=body.validated_data["confirm"])
        )
