"""Account redaction patterns that could backtrack for minutes are refused when saved and
skipped if one is already stored; ordinary patterns pass and run fast on long text."""

from __future__ import annotations

import re
import time

import pytest

from accounts.models import Account
from accounts.redaction_settings import redactor_for
from echomem.errors import ValidationFailed
from redaction.redactor import check_user_patterns
from redaction.regex_safety import backtracking_risk

RISKY = [
    r"(a+)+b",            # a repeat inside a repeat
    r"(\w+\s?)+$",
    r"(a|a?)+b",
    r"(.*a){12}",         # a counted repeat of an unbounded one: n^12 splits
    r"(a|aa)*b",          # Python reads it as (a(|a))*: an empty branch under a repeat
    r"(x|xy)+z",
    r"a*a*b",             # two unbounded repeats that can take the same characters
    r"\d+\w+x",
    r".*=.*;",
    r"a+b*a+c",           # b* may match nothing, so the two a+ meet
    r"(?i)A+a+!",         # case folding makes A and a the same character
]
SAFE = [
    r"ACME-[0-9]{6}", r"internal-[a-z]+-key", r"\bcorp_[A-Za-z0-9]{32}\b", r"\b\w+@\w+\.com",
    r"tok_[a-f0-9]{16,64}", r"(?i)secret-\d+", r"\b\S+\s+\S+", r"(ab)+", r"(cat|mouse)+",
    r"(\d{1,3}\.){3}\d{1,3}", r"a++a*b", r"(?>a+)+b", r"BEGIN .*? END", r"[A-Z]{2}\d{6}",
]


@pytest.mark.parametrize("pattern", RISKY)
def test_risky_patterns_are_named_and_refused_with_the_fix(pattern):
    assert backtracking_risk(pattern)
    with pytest.raises(ValidationFailed) as refused:
        check_user_patterns(["ACME-[0-9]{6}", pattern])
    assert refused.value.field == "redaction_patterns[1]"
    assert "possessive quantifier" in refused.value.fix
    assert "could take minutes" in refused.value.message


@pytest.mark.parametrize("pattern", [r"\w+@corp\.com", r"(.*)secret", r".*?token", r"[0-9]+x"])
def test_a_pattern_that_begins_with_an_unbounded_repeat_is_refused_with_its_own_fix(pattern):
    with pytest.raises(ValidationFailed) as refused:
        check_user_patterns([pattern])
    assert "begins with an unbounded repeat" in refused.value.message
    assert r"\b\w+@corp" in refused.value.fix


@pytest.mark.parametrize("pattern", SAFE)
def test_safe_patterns_pass_and_finish_quickly_on_long_hostile_text(pattern):
    assert backtracking_risk(pattern) is None
    assert check_user_patterns([pattern]) == [pattern]
    # What blows up a risky pattern: long runs of one character with no match at the end.
    for hostile in ("a" * 20_000 + "!", "1" * 20_000, "x " * 10_000, "A" * 20_000 + "\n"):
        started = time.perf_counter()
        re.compile(pattern).subn("", hostile)
        assert time.perf_counter() - started < 2.0, pattern


def test_a_risky_pattern_stored_before_the_check_is_skipped_not_run(db, alice):
    Account.objects.filter(pk=alice.account.pk).update(
        redaction_patterns=[r"(a+)+b", r"ACME-[0-9]{6}"])
    redactor = redactor_for(alice.account.pk)
    assert [r.pattern for r in redactor.user_patterns] == [r"ACME-[0-9]{6}"]
    started = time.perf_counter()
    clean, count = redactor.text("a" * 5_000 + " ACME-123456")
    assert count == 1 and clean.endswith("[REDACTED:custom]")
    assert time.perf_counter() - started < 1.0
