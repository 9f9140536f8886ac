"""What each expensive suite may spend in CI (DESIGN.md: the whole `.ci/run` under 20
minutes on 2 cores); docs/testing.md says how to run each one's long form.

The run's summary prints every suite's time beside its budget (tests/conftest.py), so a
suite that outgrows its share shows in the CI log before the whole run does. The whole
suite runs in two processes, so these are seconds of one process, spent beside the
other's work: they add up to about twice the run's wall time. Budgets are about a third
over each suite's time in such a run on the slower of the machines of this kind seen so
far (2 cores, 24 GiB; docs/testing.md has the figures); a loaded machine exceeds them,
which the summary says but does not fail on: a timing is not a test result.
"""

from __future__ import annotations

# Seconds per suite (a folder under tests/).
BUDGETS: dict[str, int] = {
    "tests/fuzz": 280,
    # Every bench/ script once at its smallest size, each in its own process with its own
    # embedded server (a few seconds each before any work), scale and transport starting
    # `serve` (scale a Celery worker too): 135 s in a two-process run on 2026-12-06 (2
    # cores, other jobs holding the load near 2; 276 s in one process at load 5-6). scale
    # (30 s), then first_pass and first_pass_mixed (the runbooks set through the model)
    # are the dearest. Issue 39 added portability (a box, three accounts copied, two
    # tiny scale sizes with their index rebuilds): 12 s in a run of this suite whose
    # scripts had filled the vector cache, 53 s alone with a cold cache at load 7; the
    # whole suite then took 186 and 228 s (one process, other helpers' runs beside it).
    # Issue 42 added real_corpus (build from a tiny tree, embed 49 sentences) and
    # scale_real on it (a box, recall per class, two `serve` processes for HTTP): 21 and
    # 23 s alone on 2026-12-07 (one process, load 4-6 from other helpers) beside a suite
    # then at 237: 23 more. Issue 42's catch_up (a box, one `serve`, 30 facts and 20
    # questions over /mcp, right after the write and settled): 33 s alone on 2026-12-07
    # (load 4), 20 of them the box's set-up: 33 more. Issue 42's scale_curve on
    # scale_real's kept box (three runs: stopped by its budget after a chunk, resumed to
    # 80 and 120 facts with two index builds and recall, the calibration): the scale_real
    # run went from 21-23 to 46-56 s on 2026-12-07 (load 4, other helpers' jobs): 30 more.
    "tests/bench": 336,
    # Issue 39 added one home moving a memory by export and import: 26 s alone (2 cores).
    "tests/cli": 240,
    "tests/fleet": 150,
    "tests/packaging": 140,
    # Issue 40 added the live OAuth flows (the SDK's, the conformance suite's authorization
    # scenarios) on a server of their own: 50 s in a run of this folder on 2026-12-06 (39 s
    # of it that server's set-up; one process, other helpers' runs beside it): 120 + a
    # third over those 50.
    "tests/protocol": 187,
    # Two-factor sign-in (test_two_factor.py) added 28 s of its own (the app and a recovery
    # code, a passkey through the virtual authenticator, the owner's rule: 10 + 7 + 7 s of
    # calls, 4 s of set-up; one process on 2026-12-06, load near 2 from other jobs): 110 +
    # a third over those 28. Issue 40 added an app connected by signing in and revoked
    # (test_oauth_connect.py): 6 to 7 s of calls and a second or two of set-up, alone on
    # 2 cores: 10 more. Issue 41 added axe-core on thirteen pages, each in both themes at
    # 1280 and 390 px, the theme switch and the skip link (test_accessibility.py): 41 s of
    # calls, set-up and tear-down beside the module's first set-up (22 + 12 s of the two
    # walks; the long /docs/agents/ page is half of the second), one process on 2026-12-06
    # with other helpers' runs beside it: 55 more. Issue 41's walk of every page
    # (test_every_page.py: every URL name empty and with long content at 390, 768 and 1280
    # px, axe with every rule in both themes at 390 and 1280, screenshots at 390) replaced
    # it: 54 s of calls with axe on the long world only, 63 s inside a full run whose e2e took
    # 183 s; then axe on both worlds (the first-run checklist shows in the empty one): 65 s of
    # calls alone, 11 more. The explorer's keyboard walk added 6-8 s and the first-run tick
    # in the whole walk a poll or two. 195 and a third: 260. Its long form (ECHO_E2E_FULL=1,
    # not in CI): 267 s.
    "tests/e2e": 260,
    "tests/ops": 110,
}
# Everything else together. With the suites above, about 2,150 process-seconds: about 18
# minutes of two processes at most, which leaves the set-up of a fresh machine its share of
# the 20 (the whole run took 16 min 16 s of tests on 2026-12-06). Issue 37 added about 700
# tests here (400 s of the rest, was 267); issue 39 about 290 more (the re-auth walk of
# every sensitive route, every tool under each key limit at both doors, the second
# factors, the sessions page, export and import): 630 s in a run on 2026-12-06 whose first
# minutes shared the machine with a benchmark. Issues 40 and 41 added about 170 more (the
# OAuth flow and its refusals in process, connected apps, the audit log's filters, the
# RateLimit headers): 705 s in an idle run on 2026-12-07 whose tests took 17 min 6 s (19
# min with a fresh machine's set-up), which is close to the 20. Issue 41's second session
# bought time back (the 4,000-fact plan fixture builds its HNSW index once after the load:
# four set-ups of 20 s to 4; the redaction screen's property at 100 texts a pattern, was
# 300) before adding about 60 tests: on 2026-12-07, on a faster machine of this kind, the
# whole run took 13 min 53 s of tests and 14 min 46 s with the set-up, the rest 458 s.
REST = 720
