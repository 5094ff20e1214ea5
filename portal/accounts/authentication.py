"""Sign-in with the rate limit, for every way in: the portal's login form and the admin's
(through the authentication backend) and the API's Basic auth. The limits are in
``services.login_refusal``; these classes only apply it and say why."""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from drf_spectacular.authentication import BasicScheme
from rest_framework.authentication import BasicAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled

from portal.accounts import services


class RateLimitedModelBackend(ModelBackend):
    """Django's user and password check, refused outright while the limit holds; each failure
    counted."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        address = services.client_address(request)
        if services.login_refusal(username, address):
            raise PermissionDenied("too many failed sign-ins")  # no other backend is asked
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            services.record_login_failure(username, address)
        else:
            services.forget_login_failures(user.get_username())
        return user


class RateLimitedBasicAuthentication(BasicAuthentication):
    """The API's Basic auth: 429 with Retry-After and the reason while the limit holds."""

    def authenticate_credentials(self, userid, password, request=None):
        try:
            return super().authenticate_credentials(userid, password, request)
        except AuthenticationFailed:
            refusal = services.login_refusal(userid, services.client_address(request))
            if refusal:
                raise Throttled(wait=refusal.retry_after_seconds, detail=refusal.message) from None
            raise


class RateLimitedBasicScheme(BasicScheme):
    """The OpenAPI schema names it Basic auth, as before (defined here, so it is registered)."""

    target_class = RateLimitedBasicAuthentication
