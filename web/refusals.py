"""A service's refusal (an EchoError: message, field, fix) as a person reads it on a page."""

from __future__ import annotations

from typing import Any

from django import forms

from echomem.errors import EchoError

_ITS_OWN = object()


def refusal_text(refused: EchoError, *, fix_sentence: bool = False) -> str:
    """"message: fix", or the message alone when there is no fix. `fix_sentence`: "message.
    Fix: fix." where the message ends in something a colon would run into (a pattern)."""
    if fix_sentence:
        return f"{refused.message}. Fix: {refused.fix}."
    return f"{refused.message}: {refused.fix}" if refused.fix else refused.message


def add_refusal(form: forms.Form, refused: EchoError, field: Any = _ITS_OWN, *,
                otherwise: str | None = None, fix_sentence: bool = False) -> None:
    """Show the refusal next to `field`; by default next to the field it names when the form
    has one, else next to `otherwise` (None: above the form)."""
    if field is _ITS_OWN:
        field = refused.field if refused.field in form.fields else otherwise
    form.add_error(field, refusal_text(refused, fix_sentence=fix_sentence))
