"""The surveys API: list and read surveys and their result lines; operators start one.

POST /api/v1/surveys/ answers 201 with the survey, 400 naming the field that is wrong, or 409
with the warnings when the filesystem is in use and ``confirm`` is not true.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from portal.accounts.permissions import OperatorWrites
from portal.console.choices import Via
from portal.console.services import Author
from portal.inventory.models import ServerPair
from portal.surveys import services
from portal.surveys.api.serializers import (
    StartSurveySerializer,
    SurveyResultSerializer,
    SurveySerializer,
)
from portal.surveys.models import Survey


class SurveyViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    queryset = Survey.objects.select_related("pair", "created_by", "job")
    serializer_class = SurveySerializer
    permission_classes = [OperatorWrites]

    def get_queryset(self):
        queryset = super().get_queryset()
        ssu = self.request.query_params.get("ssu")
        return queryset.filter(pair__name=ssu) if ssu else queryset

    @extend_schema(request=StartSurveySerializer, responses={201: SurveySerializer})
    def create(self, request, *args, **kwargs):
        body = StartSurveySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        pair = ServerPair.objects.filter(name=data.pop("ssu")).first()
        if pair is None:
            return Response(
                {"ssu": [f"no SSU named {request.data.get('ssu')!r}"]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            survey = services.start_survey(
                pair,
                scope=data.pop("scope"),
                server=data.pop("server", None),
                labels=data.pop("targets", None),
                confirmed=data.pop("confirm"),
                parameters=data,
                author=Author.of_request(request, Via.API),
            )
        except services.SurveyError as error:
            return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        except services.ConfirmationNeeded as needed:
            return Response(
                {
                    "confirm": ["the filesystem is in use; send confirm: true to run anyway"],
                    "warnings": needed.warnings,
                },
                status=status.HTTP_409_CONFLICT,
            )
        return Response(SurveySerializer(survey).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=SurveyResultSerializer(many=True))
    @action(detail=True, methods=["get"])
    def results(self, request, pk=None):
        """Every result line: per server (``server``), added up (``server`` empty) and each
        OST alone (``target``)."""
        survey = self.get_object()
        return Response(SurveyResultSerializer(survey.results.all(), many=True).data)
