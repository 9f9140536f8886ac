"""The forms of two-factor sign-in: a code at the second step or to confirm the app, a
passkey's name, the team's rule."""

from __future__ import annotations

from django import forms

from accounts.second_factors import NAME_CHARS


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code", max_length=64,
        error_messages={"required": "Type the 6-digit code your app shows, or a recovery "
                                    "code.",
                        "max_length": "That is not a code: type the 6 digits your app "
                                      "shows, or a recovery code (8 letters and digits)."},
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True,
                                      "spellcheck": "false"}))

    def __init__(self, *args, help_text: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].help_text = help_text


class PasskeyForm(forms.Form):
    """Which passkey (its id on the security page's list)."""

    passkey = forms.CharField(max_length=20, error_messages={
        "required": "Say which passkey: pick one from the list.",
        "max_length": "That is not a passkey of yours: pick one from the list."})


class PasskeyNameForm(PasskeyForm):
    name = forms.CharField(label="Passkey name", max_length=NAME_CHARS, required=False,
                           help_text="Where it lives, e.g. “work laptop” or “phone”.")


class RequirementForm(forms.Form):
    required = forms.ChoiceField(
        choices=[("on", "Require a second factor"), ("off", "Do not require it")],
        error_messages={"invalid_choice": "Choose on or off.",
                        "required": "Choose on or off."})
