"""multichip.expert_serving: dispatch and combine bytes against DeepEP's published byte rates, its low-latency
kernels' published latencies as ceilings the bound stays under, EPLB's expert slots against DeepSeek's own
deployment, and SGLang's EP72 decode pool beside its bound."""

import itertools
import math

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.multichip import expert_serving as X

DSV3 = "deepseek-v3"
# DeepEP docs/legacy.md, low-latency kernels on H800 + CX7 400 Gb/s, 128 tokens, hidden 7168, top-8, FP8 dispatch,
# BF16 combine: EP -> (dispatch us, dispatch GB/s, combine us, combine GB/s)
DEEPEP_LOW_LATENCY = {8: (77, 98, 114, 127), 16: (118, 63, 195, 74), 32: (155, 48, 273, 53),
                      64: (173, 43, 314, 46), 128: (192, 39, 369, 39), 256: (194, 39, 360, 40)}


def test_bytes_per_copy_by_hand():
    """FP8 dispatch: 7168 bytes + 7168/128 = 56 fp32 scales (224 bytes) = 7392; BF16 combine: 2 x 7168 = 14336."""
    assert X.dispatch_bytes_per_copy(DSV3) == 7392
    assert X.combine_bytes_per_copy(DSV3) == 14336
    assert X.dispatch_bytes_per_copy(DSV3, "bf16") == 14336


@pytest.mark.parametrize("ep", sorted(DEEPEP_LOW_LATENCY))
def test_deepep_byte_rates_match_the_byte_count(ep):
    """DeepEP's published rate x latency gives the bytes each rank sends: 128 tokens x 8 copies x 7392 (dispatch) or
    x 14336 (combine), within the rounding of its two printed figures (3 significant digits each)."""
    d_us, d_gbps, c_us, c_gbps = DEEPEP_LOW_LATENCY[ep]
    assert d_gbps * 1e9 * d_us * 1e-6 == pytest.approx(128 * 8 * X.dispatch_bytes_per_copy(DSV3), rel=0.03)
    assert c_gbps * 1e9 * c_us * 1e-6 == pytest.approx(128 * 8 * X.combine_bytes_per_copy(DSV3), rel=0.03)


@pytest.mark.parametrize("ep", sorted(DEEPEP_LOW_LATENCY))
def test_low_latency_bound_under_deepep_latencies(ep):
    """The bound (NVLink 200 GB/s each way inside an H800 node, 50 GB/s NIC across nodes, at once) never beats
    DeepEP's measured latency; from EP32 on, most copies leave the node and the NIC bound is within 30 % of it."""
    a2a = X.alltoall_bytes_per_layer(DSV3, 128, ep, gpus_per_node=8)
    d_us, _, c_us, _ = DEEPEP_LOW_LATENCY[ep]
    dispatch = max(a2a.dispatch_nvlink / 200e9, a2a.dispatch_nic / 50e9)
    combine = max(a2a.combine_nvlink / 200e9, a2a.combine_nic / 50e9)
    assert dispatch <= d_us * 1e-6 and combine <= c_us * 1e-6
    if ep >= 32:
        assert combine >= 0.7 * c_us * 1e-6
    # by hand at EP256: 248 of 256 copies leave the node: 128 x 8 x 248/256 x 7392 bytes at 50 GB/s = 146.7 us
    if ep == 256:
        assert dispatch == pytest.approx(128 * 8 * 248 / 256 * 7392 / 50e9, rel=1e-12)
        assert dispatch == pytest.approx(146.7e-6, rel=1e-3)


def test_nodes_touched_by_enumeration():
    """8 experts on 4 nodes (2 each), top-2: the mean over every pair of distinct experts of the nodes they sit on."""
    m = rl.get_model("mixtral-8x7b")  # 8 experts, top-2
    pairs = list(itertools.combinations(range(8), 2))
    mean = np.mean([len({a // 2, b // 2}) for a, b in pairs])
    assert X.nodes_touched(m, 4) == pytest.approx(mean, rel=1e-12)
    assert X.nodes_touched(DSV3, 1) == 1.0
    # DeepSeek-V3 over 4 nodes: 4 (1 - C(192, 8) / C(256, 8))
    assert X.nodes_touched(DSV3, 4) == pytest.approx(4 * (1 - math.comb(192, 8) / math.comb(256, 8)), rel=1e-12)


def test_expert_slots_match_deepseeks_deployment():
    """DeepSeek's inference overview: 32 redundant experts; 'each GPU handles 9 routed experts' at EP32 and 'each GPU
    manages 2 routed experts' at EP144; SGLang's EP72 holds 4."""
    assert X.experts_per_chip(DSV3, 32, 32) == 9
    assert X.experts_per_chip(DSV3, 144, 32) == 2
    assert X.experts_per_chip(DSV3, 72, 32) == 4
    with pytest.raises(ValueError, match="do not divide"):
        X.experts_per_chip(DSV3, 72, 0)


def test_sglang_decode_pool_beside_its_bound():
    """SGLang's EP72 decode pool (256 sequences per H100 at KV length 2,000, 22,282 output tokens/s per node): the
    bound per node is above the measured rate, the all-to-all over the NICs is its largest term (58 MoE layers of
    256 x 8 x 64/72 copies, 7392 + 14336 bytes each, at 50 GB/s = 45.9 ms), and the pool fits in memory."""
    step = X.ep_serving_step(DSV3, "H100", 256, 2000, 72, redundant_experts=32)
    hand_comm = 58 * 256 * 8 * 64 / 72 * (7392 + 14336) / 50e9
    assert step.t_comm == pytest.approx(hand_comm, rel=1e-9) and step.t_comm == pytest.approx(45.9e-3, rel=2e-3)
    assert step.time == step.t_comm > step.t_compute
    assert 8 * step.tokens_per_s_per_chip > 22282
    assert step.fits and step.memory_per_chip < 80e9


def test_overlap_and_imbalance():
    base = X.ep_serving_step(DSV3, "H800", 128, 4096, 144, redundant_experts=32, two_batch_overlap=False)
    tbo = X.ep_serving_step(DSV3, "H800", 128, 4096, 144, redundant_experts=32)
    skew = X.ep_serving_step(DSV3, "H800", 128, 4096, 144, redundant_experts=32, imbalance=1.5)
    assert base.time == pytest.approx(base.t_compute + base.t_comm) and tbo.time == max(tbo.t_compute, tbo.t_comm)
    assert skew.t_experts == pytest.approx(1.5 * tbo.t_experts) and skew.t_comm == pytest.approx(1.5 * tbo.t_comm)
    assert skew.t_attention == tbo.t_attention


def test_bad_input():
    with pytest.raises(ValueError, match="no routed experts"):
        X.ep_serving_step("llama-3-8b", "H100", 8, 100, 8)
    with pytest.raises(ValueError, match="at least 1"):
        X.ep_serving_step(DSV3, "H100", 8, 100, 64, imbalance=0.5)
    with pytest.raises(ValueError, match="phase"):
        X.ep_serving_step(DSV3, "H100", 8, 100, 64, phase="both")
    with pytest.raises(ValueError, match="mode"):
        X.alltoall_bytes_per_layer(DSV3, 8, 64, mode="fast")
    with pytest.raises(ValueError, match="8-GPU board"):
        X.ep_serving_step(DSV3, "MI300X", 8, 100, 64)


def test_chapter_09_alltoall_model_under_deepep():
    """multichip.collectives.alltoall_time_on (NCCL's ring-LL latencies borrowed: 6.6 us + (n - 1) x 0.6 us, then
    the bytes at NVLink's per-direction rate) against DeepEP's measured EP8 low-latency dispatch and combine on
    H800s: below both, and by hand 6.6 + 4.2 us + 7/8 x 128 x 8 x 7392 bytes / 200 GB/s."""
    h800 = rl.get_accelerator("H800")
    dispatch = rl.multichip.alltoall_time_on(h800, "nvlink", 128 * 8 * 7392, 8)
    combine = rl.multichip.alltoall_time_on(h800, "nvlink", 128 * 8 * 14336, 8)
    assert dispatch == pytest.approx(6.6e-6 + 7 * 0.6e-6 + 7 / 8 * 128 * 8 * 7392 / 200e9, rel=1e-9)
    assert dispatch < 77e-6 and combine < 114e-6
