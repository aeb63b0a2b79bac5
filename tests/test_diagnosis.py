"""roofline_lib.diagnosis: the response of a kernel's time to more FLOPs and more bytes."""

import pytest

from roofline_lib import diagnosis

# ---------------------------------------------------------------- classify_response

def test_classify_response():
    assert diagnosis.classify_response(1.0, 2.0, 1.02, 2, 2)[0] == "compute"
    assert diagnosis.classify_response(1.0, 1.02, 2.0, 2, 2)[0] == "memory"
    assert diagnosis.classify_response(1.0, 1.01, 1.03, 2, 2)[0] == "overhead"
    assert diagnosis.classify_response(1.0, 1.5, 1.5, 2, 2)[0] == "near the knee"
    verdict, r_flops, r_bytes = diagnosis.classify_response(1.0, 4.0, 1.0, 4, 2.5)
    assert (r_flops, r_bytes) == (1.0, 0.0)
    assert diagnosis.classify_response(1.0, 1.0, 2.5, 4, 2.5)[2] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        diagnosis.classify_response(0.0, 1.0, 1.0, 2, 2)
