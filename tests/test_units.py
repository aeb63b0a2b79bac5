"""roofline_lib.core.units: engineering formatting and SI prefixes."""

import pytest

import roofline_lib as rl


def test_eng_and_units():
    assert rl.eng(2.5e12, "FLOP/s") == "2.5 TFLOP/s"
    assert rl.eng(999.9996, "B") == "1 kB"  # rounding up moves to the next prefix
    assert rl.eng(0, "s") == "0 s" and rl.eng(-2.5e-3, "s") == "-2.5 ms"
    assert rl.units.seconds(3.2e-5) == "32 \N{MICRO SIGN}s"
    assert rl.units.gib(150.75e9) == "140.4 GiB" and rl.units.in_units(4.8e12, "T") == 4.8
    with pytest.raises(ValueError, match="unknown SI prefix"):
        rl.units.scale("X")
