"""roofline_lib.llm.memory: whether a model and its KV cache fit, and the largest batch, by hand."""

import pytest

import roofline_lib as rl
from roofline_lib.llm import memory as llm_memory

# ---------------------------------------------------------------- memory fit

def test_memory_fit_by_hand():
    m = rl.get_model("llama-2-70b")  # 137.95 GB of bf16 weights
    assert not llm_memory.fits(m, "A100", 1, 128)
    assert llm_memory.fits(m, "H200", 1, 128)
    # H200 as nvidia-smi reports it, 143,771 MiB = 150,754,820,096 B:
    # (150,754,820,096 - 2 x 68,976,648,192) / (4096 x 327,680 B) = 9.54 -> 9 sequences of 4096
    assert llm_memory.max_batch(m, "H200", 4096) == 9
    assert llm_memory.max_batch(m, "A100", 4096) == 0
    # Llama-3-8B on an A100 80GB (81,920 MiB = 85,899,345,920 B), 8K context:
    # (85,899,345,920 - 16,060,522,496) / (8192 x 131,072 B) = 65.04 -> 65
    assert llm_memory.max_batch("llama-3-8b", "A100", 8192) == 65
    # vLLM's 0.9: (77,309,411,328 - 16,060,522,496) / 1,073,741,824 = 57.04 -> 57
    assert llm_memory.max_batch("llama-3-8b", "A100", 8192, usable_fraction=0.9) == 57
    # and half a GiB of CUDA context inside it: 60,712,017,920 / 1,073,741,824 = 56.54 -> 56
    assert llm_memory.max_batch("llama-3-8b", "A100", 8192, usable_fraction=0.9, reserved_bytes=2**29) == 56
    assert list(llm_memory.max_batch("llama-3-8b", "A100", [4096, 8192])) == [130, 65]


def test_llama_3_70b_bf16_fits_one_h200():
    # 70,553,706,496 params x 2 B = 141.1e9 B: more than "141 GB" x 1e9, less than the 150.75e9 B the driver reports
    w = rl.get_model("llama-3-70b").weight_bytes("bf16")
    assert 141e9 < w < 143771 * 2**20
    assert llm_memory.fits("llama-3-70b", "H200", 1, 1)
    assert not llm_memory.fits("llama-3-70b", "H200", 1, 1, usable_fraction=0.9)   # but not inside vLLM's default share


@pytest.mark.parametrize("kwargs, message", [
    (dict(usable_fraction=1.5), "in \\(0, 1\\]"),
    (dict(usable_fraction=0), "usable_fraction must be finite and > 0"),
    (dict(reserved_bytes=-1), "reserved_bytes must be finite and >= 0"),
    (dict(reserved_bytes=float("nan")), "reserved_bytes must be"),
    (dict(reserved_bytes=1e15), "leaves no memory"),
])
def test_usable_memory_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        llm_memory.max_batch("llama-3-8b", "A100", 4096, **kwargs)
