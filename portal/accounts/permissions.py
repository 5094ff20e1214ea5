"""API permissions by role, shared by every app's viewsets."""

from __future__ import annotations

from rest_framework import permissions

from portal.accounts.choices import Role
from portal.accounts.services import has_role


class OperatorWrites(permissions.BasePermission):
    """Every signed-in user reads; operators and administrators change."""

    def has_permission(self, request, view) -> bool:
        if not request.user or not request.user.is_authenticated:
            return False
        return request.method in permissions.SAFE_METHODS or has_role(request.user, Role.OPERATOR)
