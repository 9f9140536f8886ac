"""The person's own preferences (not the account's): the time zone pages show times in."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.preferences import choose_time_zone, chosen_time_zone, time_zone_names
from echomem.errors import ValidationFailed
from web.access import Member, member
from web.refusals import add_refusal
from web.time_zones import remember_choice

FOLLOW_BROWSER = "Follow my browser"


class TimeZoneForm(forms.Form):
    time_zone = forms.ChoiceField(
        label="Time zone", required=False,
        help_text="Times on every page (the explorer's included) are shown in this zone. "
                  f"“{FOLLOW_BROWSER}” uses your browser's zone, or UTC without script.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = [("", FOLLOW_BROWSER)] + [
            (name, name.replace("_", " ")) for name in time_zone_names()]
        self.fields["time_zone"].error_messages["invalid_choice"] = (
            "%(value)s is not a time zone this server knows; pick one from the list "
            f"(an IANA name such as Europe/Paris), or “{FOLLOW_BROWSER}”.")


def _back_to(request: HttpRequest) -> str | None:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    # A path on this site only: redirect() would take any other word for a URL name.
    if (wanted.startswith("/") and "\x00" not in wanted and len(wanted) < 2000
            and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure())):
        return wanted
    return None


@member(methods=["GET", "POST"])
def preferences(request: HttpRequest, me: Member) -> HttpResponse:
    form = TimeZoneForm(request.POST or None,
                        initial={"time_zone": chosen_time_zone(request.user.pk)})
    if request.method == "POST" and form.is_valid():
        try:
            chosen = choose_time_zone(request.user, form.cleaned_data["time_zone"])
        except ValidationFailed as refused:
            add_refusal(form, refused, "time_zone")
        else:
            remember_choice(request, chosen)
            messages.success(request, f"Times are now shown in {chosen}." if chosen else
                             "Times now follow your browser's time zone.")
            return redirect(_back_to(request) or "web:preferences")
    return render(request, "web/preferences.html", {"form": form, "next": _back_to(request)})
