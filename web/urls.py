from django.contrib.auth import views as auth_views
from django.urls import path

from web import audit_log, views
from web.forms import SignInForm

app_name = "web"
urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(template_name="web/login.html",
                                                authentication_form=SignInForm,
                                                redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("keys/new/", views.key_new, name="key_new"),
    path("memories/new/", views.memory_new, name="memory_new"),
    path("memories/<str:name>/delete/", views.memory_remove, name="memory_delete"),
    path("keys/<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
    path("audit/", audit_log.audit_log, name="audit_log"),
    path("audit/export.csv", audit_log.audit_export_csv, name="audit_export_csv"),
    path("audit/export.jsonl", audit_log.audit_export_jsonl, name="audit_export_jsonl"),
    path("audit/verify/", audit_log.audit_verify_chain, name="audit_verify"),
]
