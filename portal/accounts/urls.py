from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import path
from django.views.decorators.http import require_http_methods, require_safe

from portal.accounts import views
from portal.accounts.forms import LoginForm

urlpatterns = [
    path(
        "login/",
        login_not_required(
            auth_views.LoginView.as_view(
                template_name="accounts/login.html",
                authentication_form=LoginForm,
                redirect_authenticated_user=True,
            )
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Django's views, without the PUT and OPTIONS its class views answer too.
    path(
        "password/",
        require_http_methods(["GET", "HEAD", "POST"])(
            auth_views.PasswordChangeView.as_view(template_name="accounts/password_change.html")
        ),
        name="password_change",
    ),
    path(
        "password/done/",
        require_safe(
            auth_views.PasswordChangeDoneView.as_view(
                template_name="accounts/password_change_done.html"
            )
        ),
        name="password_change_done",
    ),
    path("tour/dismiss/", views.dismiss_tour, name="tour-dismiss"),
]
