"""What each expensive suite may spend in CI (DESIGN.md: the whole `.ci/run` under 20
minutes on 2 cores), and how to run its long form.

The run's summary prints every suite's time beside its budget (tests/conftest.py), so a
suite that outgrows its share shows in the CI log before the whole run does. Budgets are
about half again each suite's time on a quiet machine of this kind (2 cores, 24 GiB;
docs/testing.md has the figures); a loaded machine exceeds them, which the summary says
but does not fail on: a timing is not a test result.
"""

from __future__ import annotations

from typing import NamedTuple


class Budget(NamedTuple):
    seconds: int
    long_form: str


BUDGETS: dict[str, Budget] = {
    "tests/fuzz": Budget(180, "ECHO_FUZZ_EXAMPLES=2000 ./dev test tests/fuzz "
                              "(random seeds; docs/security-fuzzing.md)"),
    "tests/cli": Budget(130, "the same: every command is started as a user would"),
    "tests/fleet": Budget(120, "the same: every fleet scenario runs in CI"),
    "tests/packaging": Budget(90, "the same: one wheel built and installed into a fresh venv"),
    "tests/ops": Budget(70, "the same"),
    "tests/e2e": Budget(70, "the same: every walk runs in CI"),
    "tests/protocol": Budget(60, "the same: the pinned conformance scenarios all run in CI"),
}
# Everything else together. The budgets add up to 16.5 minutes, which leaves the set-up of
# a fresh machine (dependencies, the model, Chromium) its share of the 20.
REST = Budget(270, "")
