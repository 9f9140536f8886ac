"""What each expensive suite may spend in CI (DESIGN.md: the whole `.ci/run` under 20
minutes on 2 cores); docs/testing.md says how to run each one's long form.

The run's summary prints every suite's time beside its budget (tests/conftest.py), so a
suite that outgrows its share shows in the CI log before the whole run does. Budgets are
about half again each suite's time on a quiet machine of this kind (2 cores, 24 GiB;
docs/testing.md has the figures); a loaded machine exceeds them, which the summary says
but does not fail on: a timing is not a test result.
"""

from __future__ import annotations

# Seconds per suite (a folder under tests/).
BUDGETS: dict[str, int] = {
    "tests/fuzz": 180,
    "tests/cli": 130,
    "tests/fleet": 120,
    "tests/packaging": 90,
    "tests/ops": 70,
    "tests/e2e": 70,
    "tests/protocol": 60,
}
# Everything else together. The budgets add up to 16.5 minutes, which leaves the set-up of
# a fresh machine (dependencies, the model, Chromium) its share of the 20.
REST = 270
