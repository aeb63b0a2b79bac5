"""roofline_lib.core.dtypes: storage sizes from the formats' bit widths, and the spellings accepted."""

import pytest

from roofline_lib.core.dtypes import BYTES_PER_ELEMENT, bytes_per_element, canonical_dtype

# bits per element: IEEE 754 binary64, binary32, binary16; bfloat16 (16); OCP FP8 E4M3/E5M2 (8); int8, int4;
# tf32 is a tensor-core mode whose operands are stored as fp32 (32)
# FP4 E2M1 (4). Block-scaled, with their scales: NVFP4 an E4M3 scale (8 bits) per 16 values, 4 + 8/16 = 4.5 bits;
# OCP MXFP4 and MXFP8 an E8M0 scale (8 bits) per 32, 4 + 8/32 = 4.25 and 8 + 8/32 = 8.25 bits
BITS = {"fp64": 64, "fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4, "fp4": 4,
        "nvfp4": 4.5, "mxfp4": 4.25, "mxfp8": 8.25}


@pytest.mark.parametrize("dtype, bits", sorted(BITS.items()))
def test_bytes_are_bits_over_eight(dtype, bits):
    assert bytes_per_element(dtype) == bits / 8


def test_every_dtype_has_a_size_and_no_other():
    assert set(BYTES_PER_ELEMENT) == set(BITS)


@pytest.mark.parametrize("spelling, name", [("BF16", "bf16"), ("bfloat16", "bf16"), (" fp-16 ", "fp16"),
                                            ("half", "fp16"), ("float", "fp32"), ("double", "fp64"),
                                            ("e4m3", "fp8"), ("E5M2", "fp8"), ("INT_4", "int4"),
                                            ("NVFP4", "nvfp4"), ("mx-fp4", "mxfp4"), ("e2m1", "fp4")])
def test_spellings(spelling, name):
    assert canonical_dtype(spelling) == name
    assert canonical_dtype(spelling) == name  # the second lookup comes from the cache of spellings seen


@pytest.mark.parametrize("bad, message", [("fp12", "unknown dtype 'fp12'; known dtypes: fp64, fp32"),
                                          (16, "dtype must be a string"), (None, "dtype must be a string")])
def test_unknown_or_wrong_type_is_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        canonical_dtype(bad)
