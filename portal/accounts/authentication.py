"""Sign-in with the rate limit, for every way in: the portal's login form and the admin's
(through the authentication backend) and the API's Basic auth. The limits, per address and per
user name from an address, are in ``services.login_refusal``; these classes only apply them and
say why."""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from drf_spectacular.authentication import BasicScheme
from rest_framework.authentication import BasicAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled

from portal.accounts import services


class RateLimitedModelBackend(ModelBackend):
    """Django's user and password check, refused outright while the limit holds for the address
    it comes from; each failure counted, each refusal audited."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        address = services.client_address(request)
        through_api = request is not None and request.path.startswith("/api/")
        refusal = services.login_refusal(username, address)
        if refusal:
            services.refuse_sign_in(username, address, refusal.message, through_api=through_api)
            raise PermissionDenied("too many failed sign-ins")  # no other backend is asked
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            services.record_login_failure(username, address, through_api=through_api)
        else:
            services.forget_login_failures(user.get_username(), address)
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
