"""The course's one diagnosis rule (roofline_lib.roofline.diagnosis), on hand-made timings."""

import math

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.roofline import diagnosis


def test_response_by_hand():
    assert diagnosis.response(1.0, 2.0, 2) == pytest.approx(1.0)          # time doubles with the work
    assert diagnosis.response(1.0, 1.0, 2) == 0.0                         # time does not move
    assert diagnosis.response(2.0, 3.0, 2) == pytest.approx(math.log2(1.5))
    assert diagnosis.response(1.0, 4.0, 4) == pytest.approx(1.0)          # factor 4, time x4


@pytest.mark.parametrize("times, verdict", [
    ((1.0, 2.0, 1.0), "compute"),          # FLOPs x2 -> time x2, bytes x2 -> unchanged
    ((1.0, 1.0, 2.0), "memory"),
    ((1.0, 1.05, 1.05), "overhead"),       # neither moves the time (both responses ~0.07)
    ((1.0, 1.5, 1.5), "near the knee"),    # the ridge in the no-overlap model: both x1.5
    ((1.0, 1.95, 1.9), "near the knee"),   # both respond fully: no bound stands out
    ((1.0, 1.3, 1.2), "near the knee"),    # both move a little, neither clearly (0.38 and 0.26)
])
def test_hand_made_cases(times, verdict):
    assert diagnosis.classify_response(*times, 2, 2)[0] == verdict


def test_thresholds_by_hand():
    # responses are log2 of the time ratios at factor 2; the edges sit exactly on the constants
    assert diagnosis.diagnose(0.24, 0.24) == "overhead"
    assert diagnosis.diagnose(0.25, 0.0) == "near the knee"          # FLAT is exclusive, RESPONDS not reached
    assert diagnosis.diagnose(0.5, 0.2) == "compute"                 # RESPONDS and MARGIN both just met
    assert diagnosis.diagnose(0.5, 0.21) == "near the knee"          # margin 0.29 < 0.3
    assert diagnosis.diagnose(0.49, 0.0) == "near the knee"          # clear margin, weak response
    assert diagnosis.diagnose(0.2, 0.5) == "memory"


def test_no_overlap_model_at_half_the_ridge():
    # T_math = 0.5, T_mem = 1: t = 1.5, FLOPs x2 -> 2.0, bytes x2 -> 2.5 (hand values)
    verdict, r_flops, r_bytes = diagnosis.classify_response(1.5, 2.0, 2.5, 2, 2)
    assert (r_flops, r_bytes) == (pytest.approx(math.log2(4 / 3)), pytest.approx(math.log2(5 / 3)))
    assert verdict == "memory"


@pytest.mark.parametrize("overlap", ["lower", "no_overlap"])
def test_rule_never_names_the_wrong_bound(overlap):
    # the model's times on the H200, from 1/100 to 100 x the ridge: the rule names the definition's
    # bound or says "near the knee", and names one at and beyond half / twice the ridge point
    hw = rl.get_accelerator("H200")
    ridge = hw.ridge_point("bf16")
    for rel in np.geomspace(0.01, 100, 201):
        w = rl.Workload("probe", flops=rel * ridge * 1e9, bytes=1e9, dtype="bf16")
        more_flops = rl.Workload("probe", flops=2 * w.flops, bytes=w.bytes, dtype="bf16")
        more_bytes = rl.Workload("probe", flops=w.flops, bytes=2 * w.bytes, dtype="bf16")
        t = [getattr(rl.estimate(x, hw), overlap) for x in (w, more_flops, more_bytes)]
        verdict = diagnosis.classify_response(*t, 2, 2)[0]
        assert verdict in ("near the knee", rl.estimate(w, hw).bound), rel
        if rel <= 0.5 or rel >= 2:
            assert verdict == rl.estimate(w, hw).bound, rel


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "1"])
def test_bad_times_are_refused(bad):
    with pytest.raises(ValueError, match="positive time"):
        diagnosis.classify_response(bad, 1.0, 1.0, 2, 2)


@pytest.mark.parametrize("bad", [1, 0.5, float("nan")])
def test_factors_must_grow_the_work(bad):
    with pytest.raises(ValueError, match="must be > 1"):
        diagnosis.classify_response(1.0, 1.0, 1.0, bad, 2)


def test_classify_response_from_the_measure_tests():
    assert diagnosis.classify_response(1.0, 2.0, 1.02, 2, 2)[0] == "compute"
    assert diagnosis.classify_response(1.0, 1.02, 2.0, 2, 2)[0] == "memory"
    assert diagnosis.classify_response(1.0, 1.01, 1.03, 2, 2)[0] == "overhead"
    assert diagnosis.classify_response(1.0, 1.5, 1.5, 2, 2)[0] == "near the knee"
    verdict, r_flops, r_bytes = diagnosis.classify_response(1.0, 4.0, 1.0, 4, 2.5)
    assert (r_flops, r_bytes) == (1.0, 0.0)
    assert diagnosis.classify_response(1.0, 1.0, 2.5, 4, 2.5)[2] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="t_base must be a positive time"):
        diagnosis.classify_response(0.0, 1.0, 1.0, 2, 2)
