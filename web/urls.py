from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from web import (
    account_settings,
    audit_log,
    billing,
    docs_views,
    explorer,
    explorer_notes,
    password_reset,
    portability,
    redaction,
    signup,
    team,
    verification,
    views,
)
from web.forms import SignInForm
from web.limits import SIGN_IN, by_address, by_posted, by_user, limited

app_name = "web"
urlpatterns = [
    path("signup/", limited(("signup_ip", by_address), ("signup_email", by_posted("email")))(
        signup.signup), name="signup"),
    path("signup/sent/", signup.signup_sent, name="signup_sent"),
    path("login/", limited(*SIGN_IN)(
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
    path("keys/<int:key_id>/created/", views.key_created, name="key_created"),
    path("memories/new/", views.memory_new, name="memory_new"),
    path("memories/<str:name>/delete/", views.memory_remove, name="memory_delete"),
    path("memories/<str:name>/rename/", views.memory_rename_page, name="memory_rename"),
    path("memories/<str:name>/export/", portability.memory_export, name="memory_export"),
    path("memories/<str:name>/import/", portability.memory_import, name="memory_import"),
    path("account/export/", portability.account_export, name="account_export"),
    path("memories/<str:name>/make-default/", views.memory_default, name="memory_default"),
    path("keys/<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
    path("account/delete/", views.account_remove, name="account_delete"),
    path("account/", account_settings.account_settings, name="account_settings"),
    path("memories/<str:name>/", explorer.memory_explorer, name="memory_explorer"),
    path("memories/<str:name>/entities/<uuid:entity_id>/", explorer.entity_page,
         name="explorer_entity"),
    path("memories/<str:name>/episodes/<uuid:episode_id>/", explorer.episode_page,
         name="explorer_episode"),
    path("memories/<str:name>/cause/", explorer.cause_page, name="explorer_cause"),
    path("memories/<str:name>/notes/", explorer_notes.notes_list, name="explorer_notes"),
    path("memories/<str:name>/notes/<uuid:note_id>/", explorer_notes.note_detail_page,
         name="explorer_note"),
    path("audit/", audit_log.audit_log, name="audit_log"),
    path("audit/export.csv", audit_log.audit_export_csv, name="audit_export_csv"),
    path("audit/export.jsonl", audit_log.audit_export_jsonl, name="audit_export_jsonl"),
    path("audit/verify/", audit_log.audit_verify_chain, name="audit_verify"),
    path("team/", limited(("invite_user", by_user))(team.team_page), name="team"),
    path("account/redaction/", redaction.redaction_settings, name="redaction_settings"),
    path("team/leave/", team.account_leave, name="account_leave"),
    path("team/members/<int:member_id>/role/", team.member_role, name="member_role"),
    path("team/members/<int:member_id>/remove/", team.member_remove, name="member_remove"),
    path("team/invitations/<int:invitation_id>/revoke/", team.invitation_revoke,
         name="invitation_revoke"),
    path("invitations/<str:token>/", team.invitation_accept, name="invitation_accept"),
    path("accounts/switch/", team.account_switch, name="account_switch"),
    path("accounts/new/", team.account_new, name="account_new"),
    # No trailing slash: the allowance error sends agents (and their people) to
    # <public url>/billing (billing.ledger.BILLING_PATH).
    path("billing", billing.billing_page, name="billing"),
    path("billing/", RedirectView.as_view(pattern_name="web:billing", query_string=True)),
    path("billing/checkout/", billing.billing_checkout, name="billing_checkout"),
    path("billing/portal/", billing.billing_portal, name="billing_portal"),
    # The user docs, served by the server itself (web/user_docs.py says why).
    path("docs/", docs_views.docs_index, name="docs"),
    path("docs/<slug:page>/", docs_views.docs_page, name="docs_page"),
]
