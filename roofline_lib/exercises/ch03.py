"""Chapter 03: arithmetic intensity of a matmul."""

import roofline_lib as rl

from .core import Question


def _critical_M(chip, N, K, dtype="bf16", out_dtype=None):
    return rl.symbolic.critical_M_value(chip, N, K, dtype=dtype, out_dtype=out_dtype)


def _smallest_square_tile():
    # a square m x m output tile with every re-read from HBM reaches m / 2 FLOP per bf16 byte (section 5b);
    # the smallest power of two at which that feeds the H100 SXM5's measured bf16 GEMM rate
    h100 = rl.get_accelerator("H100")
    needed = h100.achieved().peak_flops("bf16") / h100.mem_bandwidth
    side = 1
    while side * side / (side + side) < needed:
        side *= 2
    return side


def _batch_doubling():
    t = [float(rl.estimate(rl.matmul(m, 8192, 8192), "H200").lower) for m in (64, 128)]
    return t[1] / t[0]


def _why_critical_M():
    # for small M a bf16 weight matmul does about M FLOP per byte: each weight is reused M times
    near_m = all(abs(rl.matmul(m, 8192, 8192).intensity / m - 1) < 0.01 for m in (1, 8, 32))
    return "reuse" if near_m else "output"


QUESTIONS = [
    Question(
        id="03.flops_4096",
        prompt="FLOPs of a bf16 matmul [4096, 4096] @ [4096, 4096].",
        expected=lambda: rl.matmul(4096, 4096, 4096).flops,
        unit="FLOP",
        hints=("one multiply and one add per (i, j, k): 2MNK.",
               "2 * 4096**3, or rl.matmul(4096, 4096, 4096).flops."),
    ),
    Question(
        id="03.gemv_bound",
        prompt="A bf16 matrix-vector product (M = 1) with N = K = 8192: 'compute'- or 'memory'-bound on the H200?",
        expected=lambda: rl.estimate(rl.matmul(1, 8192, 8192), "H200").bound,
        kind="choice",
        choices=("compute", "memory"),
        hints=("with one row, how many times is each weight used? Compare the intensity with the H200's ridge.",
               "intensity = MNK / (MK + KN + MN) FLOP per bf16 byte at M = 1, against "
               "rl.get_accelerator('H200').ridge_point('bf16')."),
    ),
    Question(
        id="03.critical_M_a100_fp16",
        prompt="Multi-step: the critical M (rows, tokens) at which an fp16 matmul [M, K] @ [K, N] with N = 4096, "
               "K = 14336 (an FFN projection of Llama-3-8B) reaches the A100 80GB SXM4's fp16 ridge point: solve "
               "intensity(M) = ridge.",
        expected=lambda: _critical_M("A100", 4096, 14336, dtype="fp16"),
        unit="rows",
        hints=("the intensity grows with M; where does it reach the A100's fp16 ridge (312e12 / 2.039e12)?",
               "M* = R N K / (N K - R (N + K)) with R = 312e12 / 2.039e12, N = 4096, K = 14336."),
    ),
    Question(
        id="03.bytes_b200_example",
        prompt="Bytes moved by the bf16 matmul [64, 4096] @ [4096, 8192], reading both inputs and writing the output "
               "once.",
        expected=lambda: rl.matmul(64, 8192, 4096).bytes,
        unit="byte",
        hints=("each of the three matrices (both inputs and the output) crosses memory once, 2 bytes per element.",
               "2MK + 2KN + 2MN with M = 64, K = 4096, N = 8192; rl.matmul(M, N, K).bytes checks it (note the order)."),
    ),
    Question(
        id="03.limit_fp8_bf16_ffn",
        prompt="fp8 inputs, bf16 output, N = 4096, K = 14336 (an FFN projection): the intensity as M grows without "
               "bound (erratum 3).",
        expected=lambda: rl.matmul(1e15, 4096, 14336, dtype="fp8", out_dtype="bf16").intensity,
        unit="FLOP/B",
        hints=("as M grows, which byte terms grow with it and which stay fixed? fp8 is 1 byte, the bf16 output 2.",
               "bytes are MK + KN + 2MN; divide through by M and let M -> infinity: 2NK / (K + 2N)."),
    ),
    Question(
        id="03.reuse_predict",
        prompt="Predict: a bf16 weight matrix with N = K = 8192 multiplies M = 32 tokens. Its intensity in FLOP/B?",
        expected=lambda: rl.matmul(32, 8192, 8192).intensity,
        unit="FLOP/B",
        hints=("how many times is each weight used, and how many bytes is it?",
               "2M FLOPs per 2-byte weight is M FLOP/B; the activations add a little: MNK / (MN + NK + MK)."),
    ),
    Question(
        id="03.tile_design",
        prompt="Design: the smallest square output tile m_t = n_t (a power of two) that would feed the H100 SXM5's "
               "measured bf16 GEMM rate even if every re-read came from HBM.",
        expected=_smallest_square_tile,
        rtol=0.0,
        unit="rows",
        rounding="up",
        hints=("which intensity does the measured rate need from HBM, and what does a square tile reach?",
               "m_t n_t / (m_t + n_t) = m_t / 2 must reach 795 / 3.35 = 237 FLOP/B: round m_t up to a power of two."),
    ),
    Question(
        id="03.batch_doubling",
        prompt="Find the mistake: 'doubling the batch from 64 to 128 rows doubles the FLOPs, so it doubles the time' "
               "of a bf16 matmul with N = K = 8192 on the H200 SXM. By what factor does its lower bound really grow?",
        expected=_batch_doubling,
        rtol=0.002,
        unit="x",
        hints=("is the matmul compute-bound at M = 64 or 128? Compare M with the critical M.",
               "memory-bound both times: the ratio of bytes, (2 x 128 + 8192) / (2 x 64 + 8192) with N = K = 8192."),
    ),
    Question(
        id="03.why_critical_M",
        prompt="Explain: why is the critical M of a large bf16 weight matmul close to the chip's ridge point? "
               "'reuse' (each weight byte feeds about M FLOPs), 'output' (the output grows with M), "
               "'square' (FLOPs grow as M^2) or 'tensor' (tensor cores need M >= 128)?",
        expected=_why_critical_M,
        kind="choice",
        choices=("reuse", "output", "square", "tensor"),
        aliases={"weight reuse": "reuse", "tensor cores": "tensor", "m^2": "square"},
        why={"output": "the output's 2MN bytes are small next to the weights' 2NK while M << K, and more bytes "
                       "would lower the intensity, not raise it.",
             "square": "FLOPs are 2MNK: linear in M, as are the activation bytes.",
             "tensor": "the crossing follows from FLOPs and bytes alone: the critical M moves with the ridge "
                       "(165 on the A100, 229 on the H200 for 4096 x 4096), not with any tile size."},
        hints=("count the FLOPs per weight and the bytes per weight.",
               "each 2-byte weight does a multiply-add for each of the M rows: 2M FLOPs per 2 bytes, so intensity ~ M "
               "while M << N, K."),
    ),
]


__all__ = ["QUESTIONS"]
