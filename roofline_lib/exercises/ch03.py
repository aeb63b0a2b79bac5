"""Chapter 03: arithmetic intensity of a matmul."""

import roofline_lib as rl

from .core import Question


def _critical_M(chip, N, K, dtype="bf16", out_dtype=None):
    return rl.symbolic.critical_M_value(chip, N, K, dtype=dtype, out_dtype=out_dtype)


QUESTIONS = [
    Question(
        id="03.flops_4096",
        prompt="FLOPs of a bf16 matmul [4096, 4096] @ [4096, 4096].",
        expected=lambda: rl.matmul(4096, 4096, 4096).flops,
        unit="FLOP",
        hint="one multiply and one add per (i, j, k): 2MNK.",
    ),
    Question(
        id="03.square_intensity",
        prompt="Intensity of a square bf16 matmul with M = N = K = 4096, in FLOP per byte.",
        expected=lambda: rl.matmul(4096, 4096, 4096).intensity,
        unit="FLOP/B",
        hint="2n^3 FLOPs over 3 matrices of 2n^2 bytes each.",
    ),
    Question(
        id="03.limit_fp8_bf16_out",
        prompt="fp8 inputs, bf16 output, N = K = 8192: the intensity as M grows without bound (erratum 3).",
        expected=lambda: rl.matmul(1e15, 8192, 8192, dtype="fp8", out_dtype="bf16").intensity,
        unit="FLOP/B",
        hint="bytes are MK + KN + 2MN; divide through by M and let M -> infinity: 2NK / (K + 2N).",
    ),
    Question(
        id="03.gemv_bound",
        prompt="A bf16 matrix-vector product (M = 1) with N = K = 8192: 'compute'- or 'memory'-bound on the H200?",
        expected=lambda: rl.estimate(rl.matmul(1, 8192, 8192), "H200").bound,
        kind="choice",
        choices=("compute", "memory"),
    ),
    Question(
        id="03.critical_M_h200",
        prompt="Multi-step: solve intensity(M) = ridge in sympy for a bf16 matmul with N = K = 8192 on the H200 SXM, "
               "then check with rl.matmul that your M lands on the ridge. What is the critical M?",
        expected=lambda: _critical_M("H200", 8192, 8192),
        unit="rows",
        hint="sp.solve(sp.Eq(M*N*K/(M*N + N*K + M*K), R), M), then put in N, K and the ridge.",
    ),
    Question(
        id="03.critical_M_a100_fp16",
        prompt="Multi-step: the same for the A100 80GB SXM4 in fp16 with N = 4096, K = 14336 (an FFN projection).",
        expected=lambda: _critical_M("A100", 4096, 14336, dtype="fp16"),
        unit="rows",
    ),
    Question(
        id="03.bytes_b200_example",
        prompt="Bytes moved by the bf16 matmul [64, 4096] @ [4096, 8192] (the scaling book's B200 example).",
        expected=lambda: rl.matmul(64, 8192, 4096).bytes,
        unit="B",
        hint="2MK + 2KN + 2MN with M = 64, K = 4096, N = 8192.",
    ),
]
