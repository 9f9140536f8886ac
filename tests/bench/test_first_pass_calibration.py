"""The first-pass calibration the product uses is the line bench/first_pass.py fits.

A waiting fact and a settled one rank in one list, so a change to the first-pass table,
its context or the model that leaves the old line in place would rank waiting facts too
high or too low (docs/benchmarks.md, "The calibration line, and the mixed state").
"""

from __future__ import annotations

import pytest

from bench.first_pass import calibration, runbooks_vectors
from memories.search import first_pass


@pytest.fixture(scope="module")
def vectors():
    return runbooks_vectors()


def test_the_product_uses_the_line_fitted_on_each_questions_ten_best(vectors):
    scale, offset = calibration(vectors)
    assert abs(first_pass.CALIBRATION_SCALE - scale) <= 0.01
    assert abs(first_pass.CALIBRATION_OFFSET - offset) <= 0.01


def test_a_fit_over_every_pair_would_set_first_pass_cosines_lower_at_the_top(vectors):
    # At a first-pass cosine of 0.5 (a good match), the bulk line gives the lower score.
    top, bulk = calibration(vectors), calibration(vectors, best=None)
    assert top[0] * 0.5 + top[1] > bulk[0] * 0.5 + bulk[1] + 0.05
