from django.contrib.auth import views as auth_views
from django.urls import path

from web import password_reset, verification, views
from web.forms import SignInForm
from web.limits import by_ip, by_posted, by_user, limited

app_name = "web"
urlpatterns = [
    path("signup/", limited(("signup_ip", by_ip))(views.signup), name="signup"),
    path("login/", limited(("login_ip", by_ip), ("login_email", by_posted("username")))(
        auth_views.LoginView.as_view(template_name="web/login.html",
                                     authentication_form=SignInForm,
                                     redirect_authenticated_user=True)), name="login"),
    path("password-reset/", password_reset.request_view, name="password_reset"),
    path("password-reset/sent/", password_reset.ResetSent.as_view(),
         name="password_reset_sent"),
    path("password-reset/<uidb64>/<token>/", password_reset.ResetConfirm.as_view(),
         name="password_reset_confirm"),
    path("verify-email/resend/", verification.resend, name="verify_resend"),
    path("verify-email/<str:token>/", verification.verify_email, name="verify_email"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("keys/new/", limited(("key_create_user", by_user))(views.key_new), name="key_new"),
    path("memories/new/", views.memory_new, name="memory_new"),
    path("memories/<str:name>/delete/", views.memory_remove, name="memory_delete"),
    path("keys/<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
]
