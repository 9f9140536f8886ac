"""Secret redaction: what an agent writes is scrubbed before it is stored, embedded or audited.

Every tool call's free text passes here once, where every call passes
(tools/free_text.py, called by tools.calling.call_tool). The rules are data
(redaction/secret_rules.py: detect-secrets' plugins and the kinds it lacks), applied in
order. Each match becomes `[REDACTED:<kind>]`, so a reader still sees that something was
there and what it was. An account adds its own regexes (Account.redaction_patterns,
checked by `check_user_patterns` when saved: each must compile, match something, and not
risk catastrophic backtracking, redaction/regex_safety.py) and may switch redaction off
(Account.redact_secrets, on by default); accounts/redaction_settings.py keeps an
account's settings and gives its redactor (`redactor_for`).

Not secrets, and never touched: UUIDs, git SHAs (40/64 hex), hashes in URL paths,
ordinary words ("password reset flow"), empty or boolean-ish assignments
(`password=None`, `max_tokens = 4096`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from echomem.errors import ValidationFailed
from redaction.regex_safety import backtracking_risk
from redaction.secret_rules import SecretRule, secret_rules

PLACEHOLDER = "[REDACTED:{kind}]"
MAX_USER_PATTERNS = 50
MAX_USER_PATTERN_CHARS = 500

# The built-in rules, in the order they run (redaction/secret_rules.py says where each comes
# from).
SECRET_PATTERNS: tuple[SecretRule, ...] = secret_rules()

# The screen: something every rule needs in the text (folded; the union of the rules'
# hints). One search here spares the rules on the text that has none, which is nearly all
# of it (a 20-fact write redacts about 150 strings). Matched case-sensitively on folded
# text (`_folded`), five times faster than IGNORECASE in `re`.
_MAY_HOLD_A_SECRET = re.compile("|".join(dict.fromkeys(
    rule.hint.pattern for rule in SECRET_PATTERNS)))
# casefold() maps every character that IGNORECASE matches to an ASCII letter onto that
# letter, except the dotted and dotless capital/small i (tests/notes/test_redaction.py).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i"})


def _folded(text: str) -> str:
    return text.translate(_FOLD).casefold()


def may_hold_a_secret(text: str) -> bool:
    return _MAY_HOLD_A_SECRET.search(_folded(text)) is not None


@dataclass(frozen=True)
class Redactor:
    """The patterns one account's writes go through; `enabled` False passes text as is."""

    enabled: bool = True
    user_patterns: tuple[re.Pattern[str], ...] = ()

    def text(self, value: str) -> tuple[str, int]:
        """`value` with every secret replaced, and how many were."""
        if not self.enabled or not value:
            return value, 0
        total = 0
        folded = _folded(value)
        if _MAY_HOLD_A_SECRET.search(folded):
            for rule in SECRET_PATTERNS:
                if rule.hint.search(folded) is None:
                    continue
                value, count = _replace(rule.regex, rule.group, rule.kind, value)
                if count:
                    total += count
                    folded = _folded(value)
        for regex in self.user_patterns:
            value, count = _replace(regex, 0, "custom", value)
            total += count
        return value, total

    def leaves_alone(self, values: Iterable[str]) -> bool:
        """True when no text of `values` can change: the account has no patterns of its
        own and the screen finds nothing. One search over them all, joined by NUL, which
        no stored text holds and none of the screen's alternatives spans."""
        if not self.enabled:
            return True
        return not self.user_patterns and not may_hold_a_secret("\0".join(values))

    def texts(self, values: Iterable[str]) -> tuple[list[str], int]:
        out, total = [], 0
        for value in values:
            clean, count = self.text(value)
            out.append(clean)
            total += count
        return out, total


def _replace(regex: re.Pattern[str], group: int, kind: str, value: str) -> tuple[str, int]:
    placeholder = PLACEHOLDER.format(kind=kind)

    def sub(match: re.Match[str]) -> str:
        if group == 0 or match.group(group) is None:
            return placeholder
        whole, start = match.group(0), match.start(0)
        return (whole[:match.start(group) - start] + placeholder
                + whole[match.end(group) - start:])

    return regex.subn(sub, value)


def check_user_patterns(patterns: object) -> list[str]:
    """An account's own patterns, refused with the fix unless each is a usable regex."""
    field = "redaction_patterns"
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ValidationFailed("redaction patterns must be a list of regular expressions",
                               field=field, fix='e.g. ["ACME-[0-9]{6}", "internal-[a-z]+-key"]')
    if len(patterns) > MAX_USER_PATTERNS:
        raise ValidationFailed(f"{len(patterns)} redaction patterns; at most "
                               f"{MAX_USER_PATTERNS} are kept", field=field,
                               fix="merge patterns with | or drop some")
    kept = []
    for index, pattern in enumerate(p.strip() for p in patterns):
        if not pattern:
            continue
        where = f"{field}[{index}]"
        if len(pattern) > MAX_USER_PATTERN_CHARS:
            raise ValidationFailed(f"pattern {index + 1} is over {MAX_USER_PATTERN_CHARS} "
                                   "characters", field=where, fix="shorten it")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValidationFailed(f"pattern {index + 1} ({pattern!r}) is not a valid regular "
                                   f"expression: {exc}", field=where,
                                   fix="correct it (Python regular expression syntax), or "
                                       "escape literal characters such as ( [ . * +") from None
        if regex.search(""):
            raise ValidationFailed(f"pattern {index + 1} ({pattern!r}) matches empty text, so "
                                   "it would redact everywhere", field=where,
                                   fix="make it require at least one character, e.g. use + "
                                       "instead of *")
        risk = backtracking_risk(pattern)
        if risk:
            raise ValidationFailed(f"pattern {index + 1} ({pattern!r}) could take minutes on "
                                   f"one long text: {risk[0]}", field=where, fix=risk[1])
        kept.append(pattern)
    return kept


def redactor_with(*, enabled: bool, patterns: Iterable[str]) -> Redactor:
    """A redactor for these settings (an account's, or a form's not yet saved)."""
    compiled = []
    for pattern in patterns:
        # Checked when saved; one stored before a check existed (or that a newer Python
        # reads differently) and now fails it is skipped rather than run.
        try:
            regex = re.compile(pattern)
        except re.error:
            continue
        if backtracking_risk(pattern) is None:
            compiled.append(regex)
    return Redactor(enabled=enabled, user_patterns=tuple(compiled))
