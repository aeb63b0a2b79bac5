"""FLOP and byte counts against hand derivations and brute-force counts."""

import itertools

import numpy as np
import pytest

import roofline_lib as rl


def brute_force_matmul_flops(M, N, K):
    """Count the multiply and the add of every inner-product term by walking the loops."""
    flops = 0
    for _i, _j, _k in itertools.product(range(M), range(N), range(K)):
        flops += 2
    return flops


@pytest.mark.parametrize("M, N, K", [(1, 1, 1), (2, 3, 4), (5, 1, 7), (3, 6, 2)])
def test_matmul_flops_match_a_loop_count(M, N, K):
    assert rl.matmul(M, N, K).flops == brute_force_matmul_flops(M, N, K)


def test_matmul_bytes_by_hand():
    # bf16: X 2MK, Y 2KN, Z 2MN (erratum 2: the write-back is 2MN, not 2KN)
    w = rl.matmul(64, 8192, 4096)
    assert w.bytes == 2 * 64 * 4096 + 2 * 4096 * 8192 + 2 * 64 * 8192
    # the scaling book's B200 example: ~69e6 bytes moved
    assert w.bytes == pytest.approx(69e6, rel=0.01)


def test_matmul_intensity_is_mnk_over_sum_for_bf16():
    M, N, K = 512, 1024, 256
    assert rl.matmul(M, N, K).intensity == pytest.approx(M * N * K / (M * N + N * K + M * K))


def test_fp8_inputs_with_bf16_output_erratum_3():
    M, N, K = 4096, 8192, 8192
    w = rl.matmul(M, N, K, "fp8", out_dtype="bf16")
    assert w.bytes == M * K + K * N + 2 * M * N
    big = rl.matmul(1e9, N, K, "fp8", out_dtype="bf16")
    assert big.intensity == pytest.approx(2 * N * K / (K + 2 * N), rel=1e-4)


def test_weight_only_int4():
    w = rl.matmul(1, 4096, 4096, "bf16", b_dtype="int4")
    assert w.bytes == 2 * 4096 + 0.5 * 4096 * 4096 + 2 * 4096
    assert w.dtype == "bf16"


def test_attention_counts_by_hand():
    B, H, Hkv, T, S, d = 2, 32, 8, 128, 1024, 128
    w = rl.attention(B, H, Hkv, T, S, d)
    assert w.flops == 2 * B * H * T * S * d * 2  # QK^T and PV, 2 FLOPs per multiply-add
    assert w.bytes == 2 * B * (T * H * d + 2 * S * Hkv * d + T * H * d)


def test_attention_per_byte_is_half_the_per_element_ratio_erratum_4():
    H, Hkv, T, S = 32, 8, 1, 4096
    w = rl.attention(1, H, Hkv, T, S, 128)
    per_element = 2 * H * T * S / (T * H + S * Hkv)
    assert w.intensity == pytest.approx(per_element / 2)


def test_causal_pairs_brute_force():
    T, S = 5, 9
    visible = sum(1 for i in range(T) for j in range(S) if j <= S - T + i)
    full = rl.attention(1, 1, 1, T, S, 4)
    causal = rl.attention(1, 1, 1, T, S, 4, causal=True)
    assert causal.flops / full.flops == pytest.approx(visible / (T * S))
    assert causal.bytes == full.bytes
    with pytest.raises(ValueError, match="q_len <= kv_len"):
        rl.attention(1, 1, 1, 10, 5, 4, causal=True)


def test_vector_ops_by_hand():
    add = rl.vector_add(1000, "fp32")
    assert (add.flops, add.bytes) == (1000, 12000)
    d = rl.dot(1000, "fp64")
    assert (d.flops, d.bytes) == (2000, 8 * 2001)


def test_workloads_add_and_repeat():
    a, b = rl.matmul(8, 8, 8), rl.vector_add(100, "bf16")
    total = a + b
    assert total.flops == a.flops + b.flops and total.bytes == a.bytes + b.bytes
    assert total.leaves() == (a, b)
    assert sum([a, b]).flops == total.flops
    layers = total * 4
    assert layers.flops == 4 * total.flops and len(layers.leaves()) == 2


def test_arrays_broadcast():
    M = np.array([1, 10, 100])
    w = rl.matmul(M, 4096, 4096)
    assert w.flops.shape == (3,)
    assert np.all(np.diff(w.intensity) > 0)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "12", None, True, [1, -2]])
def test_bad_sizes_raise_clear_errors(bad):
    with pytest.raises(ValueError, match="M must"):
        rl.matmul(bad, 4, 4)


def test_heads_must_be_a_multiple_of_kv_heads():
    with pytest.raises(ValueError, match="multiple of kv_heads"):
        rl.attention(1, 10, 3, 1, 10, 64)


def test_workload_times_an_array_of_counts():
    # 2 x 4 x 4 x 4 = 128 FLOPs, once and twice
    w = rl.matmul(4, 4, 4) * np.array([1, 2])
    assert list(w.flops) == [128, 256]
    assert (rl.matmul(4, 4, 4) * 3).flops == 384 and (rl.matmul(4, 4, 4) * 3).name == "3 x matmul"
