"""The consent form: django-oauth-toolkit's hidden request fields, and what the person picks
(the account, whether the app may write, which memories, the default one)."""

from __future__ import annotations

from django import forms
from oauth2_provider.forms import AllowForm

from web.forms import MemoryChoice

WRITE, READ = "write", "read"
# The request's values django-oauth-toolkit keeps in columns of a set width (its Grant):
# longer, they are refused by name rather than failing on the column.
STORED_WIDTHS = {"nonce": 255, "code_challenge": 128, "code_challenge_method": 10}


def overlong(params) -> str | None:
    for name, width in STORED_WIDTHS.items():
        if len(params.get(name) or "") > width:
            return f"{name} is longer than {width} characters"
    return None


class ConsentForm(MemoryChoice, AllowForm):
    account = forms.IntegerField(widget=forms.HiddenInput)
    access = forms.ChoiceField(
        choices=[(WRITE, "Read and write"), (READ, "Read only")], initial=WRITE,
        widget=forms.RadioSelect, label="What it may do",
        help_text="Read only: it can recall and read, but storing, erasing and recording are "
                  "refused.")

    def __init__(self, *args, may_write: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not may_write:
            # The app asked to read only: there is nothing more to grant.
            self.fields["access"].choices = [(READ, "Read only")]
            self.fields["access"].initial = READ
