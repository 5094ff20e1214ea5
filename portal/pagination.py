"""The API's pages: `limit` and `offset` as DRF reads them, kept within what a database can
count (a limit or offset past 2^63 made SQLite and PostgreSQL fail with a server error)."""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination

# Far beyond any inventory or history the portal keeps; a larger offset is past the end anyway.
MAX_OFFSET = 2**31


class Pages(LimitOffsetPagination):
    max_limit = 1000

    def get_offset(self, request) -> int:
        return min(super().get_offset(request), MAX_OFFSET)
