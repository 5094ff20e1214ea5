"""The sign-in form: Django's, saying why a sign-in is refused while the rate limit holds."""

from __future__ import annotations

from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from portal.accounts import services


class LoginForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": "Your user name and password did not match. Please try again.",
    }

    def get_invalid_login_error(self):
        refusal = services.login_refusal(
            self.cleaned_data.get("username"), services.client_address(self.request)
        )
        if refusal:
            return ValidationError(refusal.message, code="throttled")
        return super().get_invalid_login_error()
