"""llm.experts: the routed experts a batch touches, against exact fractions, a Monte-Carlo count of top-k
routing and a sympy derivation of E(1 - (1 - k/E)^T)."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import roofline_lib as rl
from roofline_lib.llm import experts


def _exact(E, k, T):
    """E(1 - (1 - k/E)^T) in exact rational arithmetic."""
    return float(E * (1 - (1 - Fraction(k, E)) ** T))


@pytest.mark.parametrize("batch, hand", [(1, 8.0), (8, 57.421), (64, 222.442), (256, 255.924)])
def test_deepseek_v3_hand_values(batch, hand):
    """DeepSeek-V3 routes each token to 8 of 256 experts; one decode token per sequence: hand values to 3 places
    (256 (1 - (31/32)^T): T = 8 gives 256 x 0.22430, T = 64 gives 256 x 0.86892)."""
    assert rl.llm.experts_touched("deepseek-v3", batch) == pytest.approx(hand, abs=1e-3)
    assert rl.llm.experts_touched("deepseek-v3", batch) == pytest.approx(_exact(256, 8, batch), rel=1e-12)


def test_monte_carlo_top_k_routing():
    """Route T tokens to k distinct experts uniformly at random (a random permutation's first k), count the
    distinct experts, average: within four standard errors of the formula."""
    rng = np.random.default_rng(14)
    E, k, trials = 256, 8, 1500
    for T in (1, 8, 64):
        picks = np.argsort(rng.random((trials, T, E)), axis=-1)[..., :k].reshape(trials, -1)
        counts = np.array([np.unique(row).size for row in picks])
        err = counts.std(ddof=1) / np.sqrt(trials)
        assert abs(counts.mean() - rl.llm.experts_touched("deepseek-v3", T)) <= 4 * err + 1e-9


def test_sympy_derivation():
    """P(one token misses expert e) = C(E-1, k) / C(E, k) = 1 - k/E; T independent tokens miss it with that to the
    power T; linearity of expectation over E experts gives the formula."""
    E, k, T = sp.symbols("E k T", positive=True, integer=True)
    miss_one = sp.binomial(E - 1, k) / sp.binomial(E, k)
    assert sp.simplify(sp.combsimp(miss_one) - (1 - k / E)) == 0
    touched = E * (1 - miss_one ** T)
    for e, kk, t in ((256, 8, 64), (8, 2, 3), (128, 8, 1)):
        assert float(touched.subs({E: e, k: kk, T: t})) == pytest.approx(_exact(e, kk, t), rel=1e-12)


def test_imbalanced_routing_by_enumeration():
    """Top-1 routing with unequal probabilities: the formula against every routing of two tokens to four experts."""
    model = rl.get_model("mixtral-8x7b")  # 8 experts, top-2: use its shape for a check of the weights below
    load = np.array([4, 3, 2, 1, 1, 1, 1, 1], float)
    p = experts.routing_probabilities(model, load)
    assert p.sum() == pytest.approx(2) and p[0] == pytest.approx(2 * 4 / 14)
    probs = [0.4, 0.3, 0.2, 0.1]
    mean = sum(probs[a] * probs[b] * len({a, b}) for a, b in itertools.product(range(4), repeat=2))
    assert sum(1 - (1 - q) ** 2 for q in probs) == pytest.approx(mean, rel=1e-12)
    # skew never touches more experts than uniform routing (the expected count is concave in each p_e)
    uniform = rl.llm.experts_touched(model, [1, 2, 4, 16])
    skewed = rl.llm.experts_touched(model, [1, 2, 4, 16], imbalance=load)
    assert np.all(skewed <= uniform + 1e-12) and skewed[0] == pytest.approx(2)


def test_blocks_read_the_touched_experts():
    """A decode step reads the routed experts' weights once per expert touched: the MoE weight bytes of DeepSeek-V3
    at batch 8 are 57.42 experts' worth (gate, up and down: 3 x 7168 x 2048 fp8 bytes each) per MoE layer."""
    m = rl.get_model("deepseek-v3")
    step = rl.decode_step(m, 8, 1024, weight_dtype="fp8", kv_dtype="bf16", compute_dtype="bf16")
    parts = {p.name: p for p in step.leaves() if p.name in ("MoE experts gate+up", "MoE experts down")}
    routed = 8 * 8  # token-expert assignments
    act_bytes = 2 * routed * (7168 + 2 * 2048) + 2 * routed * (2048 + 7168)  # activations in and out, bf16
    weights = sum(p.bytes for p in parts.values()) / m.moe_layers - act_bytes
    assert weights == pytest.approx(_exact(256, 8, 8) * 3 * 7168 * 2048, rel=1e-9)


def test_tokens_per_expert_and_bad_input():
    assert experts.tokens_per_expert("deepseek-v3", 1) == pytest.approx(1.0)
    assert experts.tokens_per_expert("deepseek-v3", 8192) == pytest.approx(8192 * 8 / 256, rel=1e-6)
    with pytest.raises(ValueError, match="no routed experts"):
        rl.llm.experts_touched("llama-3-8b", 4)
    with pytest.raises(ValueError, match="tokens"):
        rl.llm.experts_touched("deepseek-v3", 0)
    with pytest.raises(ValueError, match="one relative load per routed expert"):
        rl.llm.experts_touched("deepseek-v3", 4, imbalance=[1, 2])
    with pytest.raises(ValueError, match="no load may exceed"):
        rl.llm.experts_touched("mixtral-8x7b", 4, imbalance=[10, 1, 1, 1, 1, 1, 1, 1])
