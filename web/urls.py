from django.contrib.auth import views as auth_views
from django.urls import path

from web import team, views
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
    path("team/", team.team_page, name="team"),
    path("team/leave/", team.account_leave, name="account_leave"),
    path("team/members/<int:member_id>/role/", team.member_role, name="member_role"),
    path("team/members/<int:member_id>/remove/", team.member_remove, name="member_remove"),
    path("team/invitations/<int:invitation_id>/revoke/", team.invitation_revoke,
         name="invitation_revoke"),
    path("invitations/<str:token>/", team.invitation_accept, name="invitation_accept"),
    path("accounts/switch/", team.account_switch, name="account_switch"),
    path("accounts/new/", team.account_new, name="account_new"),
]
