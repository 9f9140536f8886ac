"""Rotating a key: the holder picks how long the old secret keeps working; the new secret
is shown once on the key_created page, as for a new key."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache

from accounts.key_rotation import api_key_rotate, rotatable_key
from echomem.errors import ValidationFailed
from web import shown_once
from web.access import Member, member
from web.forms import RotateKeyForm
from web.refusals import add_refusal


@never_cache
@member(methods=["GET", "POST"])
def key_rotate(request: HttpRequest, me: Member, key_id: int) -> HttpResponse:
    key = rotatable_key(principal=me.principal, key_id=key_id)
    form = RotateKeyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            key, plaintext = api_key_rotate(key=key, grace=form.cleaned_data["grace"],
                                            actor_id=request.user.pk)
        except ValidationFailed as refused:
            add_refusal(form, refused)
        else:
            shown_once.keep(request, "api_key", key.pk, plaintext)
            messages.success(request, f"Key {key} has a new secret, shown below once.")
            return redirect("web:key_created", key_id=key.pk)
    return render(request, "web/key_rotate.html", {"key": key, "form": form})
