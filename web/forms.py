from __future__ import annotations

from datetime import UTC, date, datetime, time

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm, UsernameField
from django.utils import timezone

from accounts.key_rotation import GRACE_PERIODS
from accounts.sign_in_names import FoldedEmailField
from memories.erasure.services import KeysDecision
from memories.models import MEMORY_NAME_RULE, memory_name_validator


class SignUpForm(forms.Form):
    # Whether the email has an account is not this form's business: sign-up answers the
    # same either way (web/signup.py).
    email = FoldedEmailField(max_length=150, widget=forms.EmailInput(
        attrs={"autocomplete": "email", "autofocus": True}))
    password = forms.CharField(strip=False, widget=forms.PasswordInput(
        attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html())

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("email") and cleaned.get("password"):
            user = get_user_model()(username=cleaned["email"], email=cleaned["email"])
            try:
                password_validation.validate_password(cleaned["password"], user)
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned


class MemoryChoice(forms.Form):
    """Which memories a key or a connected app may use, and its default: one declaration
    for the new-key page and the consent page (the rule is accounts.limits'
    check_memory_choice, which the services apply)."""

    default_memory = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="the account's default",
        help_text="Where it reads and writes when a call names no memory.")
    memories = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple,
        label="Memories it may use",
        help_text="Tick none for every memory of the account (also ones made later). When "
                  "you tick some, the default memory must be one of them.")

    def __init__(self, *args, memories, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["default_memory"].queryset = memories
        self.fields["memories"].queryset = memories


class NewKeyForm(MemoryChoice):
    field_order = ["name", "tool", "default_memory", "read_only", "memories", "expires_on"]

    name = forms.CharField(max_length=100, help_text="For you: where the key lives, e.g. "
                                                     "“laptop” or “CI”.")
    tool = forms.RegexField(
        max_length=64, regex=r"^[a-z0-9][a-z0-9._-]*$",
        error_messages={"invalid": "Use lower-case letters, digits, dots, dashes or "
                                   "underscores, e.g. claude-code."},
        help_text="The agent that will use it, e.g. claude-code, cursor or support-bot. Its "
                  "solo facts are kept apart per tool.")
    read_only = forms.BooleanField(
        label="Read only", required=False,
        help_text="Tools that write, erase or record (write_episode, memory_save, forget, "
                  "record_recall_save) are refused; searches and reads work.")
    expires_on = forms.DateField(
        label="Expires on", required=False, widget=forms.DateInput(attrs={"type": "date"}),
        error_messages={"invalid": "Enter a date as YYYY-MM-DD, e.g. 2027-01-31."},
        help_text="The key stops working at 00:00 UTC that day; its holder is mailed a week "
                  "before. Leave empty for a key that does not expire.")

    def clean_expires_on(self):
        day = self.cleaned_data.get("expires_on")
        if day is not None and not timezone.now().date() < day < date(9999, 1, 1):
            raise forms.ValidationError("Pick a date after today (and before year 9999), or "
                                        "leave it empty for a key that does not expire.")
        return day

    def limits(self) -> dict:
        """The key's limits as api_key_create takes them."""
        chosen, day = self.cleaned_data["memories"], self.cleaned_data["expires_on"]
        return {"read_only": self.cleaned_data["read_only"],
                "memories": list(chosen) if chosen else None,
                "expires_at": (datetime.combine(day, time.min, tzinfo=UTC)
                               if day is not None else None)}


class RotateKeyForm(forms.Form):
    grace = forms.ChoiceField(
        label="The old secret keeps working for", initial="1d",
        choices=[(name, label) for name, (label, _) in GRACE_PERIODS.items()],
        error_messages={"invalid_choice": "Choose one of the listed grace periods."},
        help_text="Time to give the agent its new secret; after that, the old one is refused. "
                  "Choose none if the old secret may have leaked.")


class NewMemoryForm(forms.Form):
    # The model's own rule and message: one declaration of what a memory name is.
    name = forms.CharField(
        max_length=64, validators=[memory_name_validator],
        help_text=f"Agents pass this name as <code>memory</code>: {MEMORY_NAME_RULE}, "
                  "e.g. support-bot.")
    description = forms.CharField(max_length=500, required=False)


class DeleteMemoryForm(forms.Form):
    """The name typed to confirm and, when live keys use the memory as their default, what
    happens to them (memories.erasure.services.memory_delete refuses a deletion that leaves
    it out)."""

    REVOKE = "revoke"
    MOVE = "to:"  # + a memory's name: no memory name contains ':'

    confirm = forms.CharField(label="Type the memory's name to confirm", max_length=64)

    def __init__(self, *args, keys: list, others: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.keys = keys
        if keys:
            which = "this key" if len(keys) == 1 else f"these {len(keys)} keys"
            them = "it" if len(keys) == 1 else "them"
            self.fields["keys_to"] = forms.ChoiceField(
                label=f"What happens to {which}",
                choices=[("", "Choose…"),
                         (self.REVOKE, f"Revoke {them}: agents using {them} are refused "
                                       "from now on"),
                         *((self.MOVE + name, f"Move {them} to {name}") for name in others)],
                error_messages={"required": f"Choose what happens to {which}: revoke, or "
                                            "move to another memory."},
                help_text="Their agents write here when they name no memory. They never "
                          "move to another memory unless you pick it.")
            self.fields["shown_keys"] = forms.CharField(
                widget=forms.HiddenInput, initial=",".join(str(key.pk) for key in keys))
            self.order_fields(["keys_to", "confirm"])

    def keys_decision(self) -> KeysDecision | None:
        """What the person chose for the keys they were shown (None: no key was listed)."""
        chosen = self.cleaned_data.get("keys_to")
        if not chosen:
            return None
        shown = frozenset(int(pk) for pk in self.cleaned_data["shown_keys"].split(",")
                          if pk.isdigit() and len(pk) < 19)
        return KeysDecision(key_ids=shown, move_to=(chosen.removeprefix(self.MOVE)
                                                    if chosen != self.REVOKE else None))


class RenameMemoryForm(forms.Form):
    new_name = forms.CharField(
        label="New name", max_length=64, validators=[memory_name_validator],
        help_text=f"{MEMORY_NAME_RULE}, e.g. support-bot.")


class DeleteAccountForm(forms.Form):
    confirm = forms.CharField(label="Type the account's name to confirm", max_length=200)


class SignInForm(AuthenticationForm):
    """The email (staff: their user name), found in any case or width by the sign-in
    backend (accounts/backends.py)."""

    username = UsernameField(label="Email", widget=forms.TextInput(
        attrs={"autofocus": True, "autocomplete": "username"}))
    # Django's own says "username", a field this page does not have, and that both fields
    # may be case-sensitive, which the email is not.
    error_messages = {
        "invalid_login": "That email and password do not match an account here. Check both, "
                         "or reset your password.",
        "inactive": "This account is switched off; ask the server's operator.",
    }

