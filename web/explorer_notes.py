"""The explorer's notes: the coding agents' decisions, bugs and patterns in one memory,
searchable, each with the versions its later saves replaced."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.principal import Principal
from memories.notes.browse import note_list, note_page, note_projects, note_scope_choices
from web.explorer import memory_page
from web.explorer_forms import NotesForm


@memory_page
def notes_list(request: HttpRequest, principal: Principal, memory) -> HttpResponse:
    form = NotesForm(request.GET, scopes=note_scope_choices(principal, memory))
    context: dict[str, Any] = {"memory": memory, "form": form}
    if form.is_valid():
        scope = form.chosen_scope()
        context.update(
            scope=scope, projects=note_projects(memory, scope.partition),
            notes=note_list(memory, scope.partition, words=form.cleaned_data["q"],
                            project=form.cleaned_data["project"]))
    return render(request, "web/explorer_notes.html", context)


@memory_page
def note_detail_page(request: HttpRequest, principal: Principal, memory,
                     note_id: uuid.UUID) -> HttpResponse:
    return render(request, "web/explorer_note.html",
                  {"memory": memory, "note": note_page(principal, memory, note_id)})
