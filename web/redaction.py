"""The account's secret redaction page: owners and admins change it, members read it, and
anyone on the account may preview what a sample text would be stored as."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize

from accounts.redaction_settings import (
    MAY_CHANGE,
    RedactionSettings,
    redaction_preview,
    redaction_settings_change,
    redaction_settings_of,
)
from echomem.errors import ValidationFailed
from redaction.redactor import SECRET_PATTERNS
from web.access import Member, member
from web.redaction_forms import RedactionSettingsForm
from web.refusals import add_refusal


@member(methods=["GET", "POST"])
def redaction_settings(request: HttpRequest, me: Member) -> HttpResponse:
    principal, role = me.principal, me.role
    saved = redaction_settings_of(principal)
    may_change = role in MAY_CHANGE
    form = RedactionSettingsForm(
        request.POST or None, may_change=may_change,
        initial={"redact_secrets": saved.enabled,
                 "redaction_patterns": "\n".join(saved.patterns)})
    preview = None
    if request.method == "POST" and form.is_valid():
        chosen = RedactionSettings(form.cleaned_data["redact_secrets"],
                                   form.cleaned_data["redaction_patterns"])
        if request.POST.get("action") == "preview":
            text, count = redaction_preview(form.cleaned_data["sample"], chosen)
            preview = {"text": text, "count": count, "unsaved": chosen != saved}
        else:
            try:
                redaction_settings_change(principal=principal, actor_role=role,
                                          enabled=chosen.enabled, patterns=chosen.patterns)
            except ValidationFailed as refused:  # a check the form did not make
                add_refusal(form, refused, "redaction_patterns", fix_sentence=True)
            else:
                count = len(chosen.patterns)
                messages.success(request, "Saved: secret redaction is "
                                 f"{'on' if chosen.enabled else 'off'}, with {count} "
                                 f"pattern{pluralize(count)} of your own.")
                return redirect("web:redaction_settings")
    return render(request, "web/redaction_settings.html", {
        "account": me.account, "role": role,
        "may_change": may_change, "form": form, "saved": saved, "preview": preview,
        "kinds": sorted({pattern.kind for pattern in SECRET_PATTERNS}),
    })
