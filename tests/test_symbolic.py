"""rl.symbolic: the sympy derivations agree with hand-written formulas, brute-force counts,
and the numeric workloads (rl.matmul, rl.attention) at random points."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_lib as rl
from roofline_lib.roofline import symbolic as sym
from roofline_lib.roofline.symbolic import B, G, H, H_kv, K, M, N, S, T, b, d_qk, d_v


def same(a, b):
    return sp.simplify(a - b) == 0


# ------------------------------------------------------------------ brute-force counts

def count_matmul_ops(m, n, k):
    """Multiply and add operations of the schoolbook matmul, counted one by one."""
    ops = 0
    for _ in range(m):
        for _ in range(n):
            for _ in range(k):
                ops += 2  # acc += x * y
    return ops


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (2, 3, 5), (4, 1, 7), (3, 3, 3)])
def test_matmul_flops_count_the_loops(m, n, k):
    assert sym.matmul_flops().subs({M: m, N: n, K: k}) == count_matmul_ops(m, n, k)


@pytest.mark.parametrize("t,s", [(1, 1), (1, 9), (3, 3), (4, 10), (7, 7)])
def test_causal_pairs_count_the_mask(t, s):
    # query i of T (the last T positions of S) sees keys 0 .. S - T + i
    mask = np.tril(np.ones((t, s), dtype=bool), k=s - t)
    assert sym.causal_pairs().subs({T: t, S: s}) == mask.sum()


# ------------------------------------------------------------------ matmul: the seed's forms and the errata

def test_matmul_bf16_intensity_is_mnk_over_mn_plus_nk_plus_mk():
    assert same(sym.matmul_intensity_for("bf16"), M * N * K / (M * N + N * K + M * K))


def test_matmul_large_M_limits():
    assert same(sym.large_M_limit(sym.matmul_intensity_for("bf16")), N * K / (N + K))
    # fp8 throughout: twice the bf16 limit, the seed's 2NK/(N+K)
    assert same(sym.large_M_limit(sym.matmul_intensity_for("fp8")), 2 * N * K / (N + K))
    # erratum 3: fp8 inputs with a bf16 output
    fp8_bf16 = sym.large_M_limit(sym.matmul_intensity_for("fp8", out_dtype="bf16"))
    assert same(fp8_bf16, 2 * N * K / (K + 2 * N))
    assert not same(fp8_bf16, 2 * N * K / (N + K))


def test_matmul_writeback_is_MN_elements():
    # erratum 2: Z is [M, N], so the write is b_Z * M * N bytes, not 2KN
    written = sym.matmul_bytes() - sym.matmul_bytes(z=0)
    assert same(written, sym.b_Z * M * N)


def test_square_and_matrix_vector():
    square = sym.matmul_intensity_for("bf16").subs({M: sym.n, N: sym.n, K: sym.n})
    assert same(square, sym.n / 3)
    gemv = sym.matmul_intensity_for("bf16").subs(M, 1)
    assert sp.limit(sp.limit(gemv, N, sp.oo), K, sp.oo) == 1


def test_matmul_intensity_rises_with_each_dimension_symbolically():
    expr = sym.matmul_intensity()
    for var in (M, N, K):
        derivative = sp.factor(sp.diff(expr, var))
        assert derivative.is_positive, (var, derivative)


def test_critical_M_lands_on_the_ridge():
    hw = rl.get_accelerator("H200")
    m_star = sym.critical_M_value(hw, 4096, 4096)
    # independent check through the numeric workload
    assert rl.matmul(m_star, 4096, 4096).intensity == pytest.approx(hw.ridge_point("bf16"), rel=1e-12)
    assert rl.estimate(rl.matmul(1.01 * m_star, 4096, 4096), hw).bound == "compute"
    assert rl.estimate(rl.matmul(0.99 * m_star, 4096, 4096), hw).bound == "memory"
    # hand: ridge 989.4/4.8 = 206.125; solve 4096 M / (2M + 4096) = 206.125
    assert m_star == pytest.approx(206.125 * 4096 / (4096 - 2 * 206.125), rel=1e-12)


def test_critical_M_refuses_a_matmul_that_never_crosses():
    # 128 x 128 weights: intensity tends to 128*128/256 = 64 < 206
    with pytest.raises(ValueError, match="never reaches"):
        sym.critical_M_value("H200", 128, 128)


# ------------------------------------------------------------------ attention: seed forms and errata 4-6

def test_attention_per_element_is_2hts_over_ht_plus_hkv_s():
    assert same(sym.attention_intensity(1), 2 * H * T * S / (H * T + H_kv * S))


def test_attention_per_bf16_byte_is_half_the_per_element_ratio():  # erratum 4
    assert same(sym.attention_intensity(2), H * T * S / (H * T + H_kv * S))


def test_prefill_simplification():  # erratum 5
    assert same(sym.prefill_intensity(1), 2 * G * T / (G + 1))
    seed = 2 * T / (1 + G)
    assert not same(sym.prefill_intensity(1), seed)
    assert same(sym.prefill_intensity(1).subs(G, 1), seed.subs(G, 1))  # MHA hides the slip
    assert float(sym.prefill_intensity(1).subs(G, 8) / T) == pytest.approx(16 / 9)
    assert float(seed.subs(G, 8) / T) == pytest.approx(2 / 9)


def test_decode_limit():  # erratum 6
    assert same(sym.decode_intensity(1), 2 * T * G)
    assert same(sym.decode_intensity(2).subs(T, 1), G)
    # Llama-3-8B: 32 query heads, 8 kv heads -> G = 4 FLOP per bf16 byte
    assert sym.decode_intensity(2).subs({T: 1, G: 32 // 8}) == 4


def test_decode_is_memory_bound_on_every_chip():
    worst = float(sym.decode_intensity(2).subs({T: 1, G: 32}))  # MQA with 32 heads: G = 32
    names = rl.list_accelerators("bf16")  # the intensity is of bf16 attention
    assert len(names) >= 15
    for name in names:
        assert worst < rl.get_accelerator(name).ridge_point("bf16"), name


def test_critical_prefill_T_lands_on_the_ridge():
    t_star = sym.critical_prefill_T(2).subs({G: 4, sym.R: 206})
    w = rl.attention(1, 32, 8, float(t_star), float(t_star), 128)
    assert w.intensity == pytest.approx(206)


def test_causal_prefill_intensity():
    # T = S with a mask: T(T+1)/2 pairs instead of T^2
    assert same(sym.prefill_intensity(1, causal=True), G * (T + 1) / (G + 1))


# ------------------------------------------------------------------ random points against the numeric code

dtypes = st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4"])
sizes = st.integers(min_value=1, max_value=1 << 16)


@settings(max_examples=60, deadline=None)
@given(m=sizes, n=sizes, k=sizes, x=dtypes, y=dtypes, z=dtypes)
def test_matmul_expressions_match_rl_matmul(m, n, k, x, y, z):
    w = rl.matmul(m, n, k, dtype=x, b_dtype=y, out_dtype=z)
    point = {M: m, N: n, K: k, **sym.dtype_bytes(x, y, z)}
    assert int(sym.matmul_flops().subs(point)) == w.flops
    assert float(sym.matmul_bytes().subs(point)) == pytest.approx(w.bytes, rel=1e-12)
    assert float(sym.matmul_intensity().subs(point)) == pytest.approx(w.intensity, rel=1e-12)
    assert sym.evaluate(sym.matmul_intensity_for(x, y, z), M=m, N=n, K=k) == pytest.approx(w.intensity, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(batch=st.integers(1, 64), kv_heads=st.integers(1, 16), group=st.integers(1, 8),
       t=st.integers(1, 8192), s=st.integers(1, 8192), dqk=st.sampled_from([64, 96, 128, 192]),
       dv=st.sampled_from([64, 128, 256]), dtype=st.sampled_from(["bf16", "fp8", "fp32"]), causal=st.booleans())
def test_attention_expressions_match_rl_attention(batch, kv_heads, group, t, s, dqk, dv, dtype, causal):
    if causal and t > s:
        t, s = s, t
    w = rl.attention(batch, kv_heads * group, kv_heads, t, s, dqk, dv, dtype=dtype, causal=causal)
    point = {B: batch, H: kv_heads * group, H_kv: kv_heads, T: t, S: s, d_qk: dqk, d_v: dv,
             b: sp.nsimplify(rl.bytes_per_element(dtype))}
    assert float(sym.attention_flops(causal).subs(point)) == pytest.approx(w.flops, rel=1e-12)
    assert float(sym.attention_bytes().subs(point)) == pytest.approx(w.bytes, rel=1e-12)
    assert float(sym.attention_intensity(causal=causal).subs(point)) == pytest.approx(w.intensity, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(m=sizes, n=sizes, k=sizes, factor=st.integers(2, 64), which=st.sampled_from("MNK"),
       dtype=st.sampled_from(["bf16", "fp8", "fp32"]))
def test_matmul_intensity_rises_with_each_dimension(m, n, k, factor, which, dtype):
    shape = {"M": m, "N": n, "K": k}
    bigger = dict(shape, **{which: shape[which] * factor})
    assert rl.matmul(**bigger, dtype=dtype).intensity > rl.matmul(**shape, dtype=dtype).intensity


def test_evaluate_names_what_is_wrong():
    with pytest.raises(ValueError, match="no value given for K"):
        sym.evaluate(sym.matmul_intensity_for("bf16"), M=1, N=2)
    with pytest.raises(ValueError, match="Q not in the expression"):
        sym.evaluate(sym.matmul_intensity_for("bf16"), M=1, N=2, K=3, Q=4)
    with pytest.raises(ValueError, match="finite and > 0"):
        sym.evaluate(sym.matmul_intensity_for("bf16"), M=1, N=2, K=-3)
    assert math.isclose(sym.evaluate(sym.matmul_intensity_for("bf16"), M=3, N=3, K=3), 1.0)
