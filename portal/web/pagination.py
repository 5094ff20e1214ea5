"""The API's pages: `limit` and `offset` as DRF reads them, but a value that is not a whole
number in range is a 400 naming it (DRF alone takes "nan" or "1e308" for the default, and a
limit or offset past 2^63 made SQLite and PostgreSQL fail with a server error)."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

from portal.web.query_numbers import BadParameter, whole_number

# Far beyond any inventory or history the portal keeps; a larger offset is past the end anyway.
MAX_OFFSET = 2**31


class Pages(LimitOffsetPagination):
    max_limit = 1000

    def get_limit(self, request) -> int:
        return self._read(request, self.limit_query_param, 1, self.max_limit, self.default_limit)

    def get_offset(self, request) -> int:
        return self._read(request, self.offset_query_param, 0, MAX_OFFSET, 0)

    @staticmethod
    def _read(request, field: str, low: int, high: int, default: int) -> int:
        text = request.query_params.get(field)
        if not text:  # absent or empty: as DRF, the default
            return default
        try:
            return whole_number(field, text, low=low, high=high)
        except BadParameter as error:
            raise ValidationError({field: [str(error)]}) from None
