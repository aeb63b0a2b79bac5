"""roofline_lib.llm.steps (and llm.blocks, whose only caller it is): prefill, decode and extend steps against
independent values: llm-analysis's worked example, hand derivations of FLOPs and bytes, the central claims
(prefill compute-bound, decode memory-bound), vectorised sweeps and refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_lib as rl
from roofline_lib import llm


def test_llm_analysis_llama_13b_on_a100():
    """llm-analysis (cli99/llm-analysis): 13B LLaMA, A100-SXM-80GB, batch 1, 512 prompt + 32 generated,
    bf16: KV cache 445.64 MB (= 2 x 40 layers x 5120 x (512 + 32) positions x 2 bytes, MB = 1e6 B);
    decode step ~12.9 ms, almost all of it reading ~25.5 GB of weights at 2.039 TB/s."""
    m = rl.get_model("llama-2-13b")
    assert m.kv_cache_bytes(1, 512 + 32) / 1e6 == pytest.approx(445.64, abs=0.01)
    est = rl.estimate(rl.decode_step(m, 1, 512 + 32), "A100")
    assert est.bound == "memory"
    assert est.lower == pytest.approx(12.9e-3, rel=0.02)
    weights_read = m.weight_bytes("bf16") - m.vocab_size * m.hidden_size * 2  # the embedding is a lookup
    assert weights_read == pytest.approx(25.5e9, rel=0.02)
    assert weights_read / est.workload.bytes > 0.95


# ---------------------------------------------------------------- FLOPs

MATMUL_WORDS = ("projection", "LM head", "router", "MoE experts gate+up", "MoE experts down")


def matmul_flops(w):
    return sum(p.flops for p in w.leaves() if any(word in p.name for word in MATMUL_WORDS))


@pytest.mark.parametrize("name", ["llama-2-7b", "llama-3-70b", "mixtral-8x7b", "deepseek-v2-lite"])
def test_decode_flops_are_two_per_active_weight_per_token(name):
    m = rl.get_model(name)
    batch, context = 4, 1000
    w = rl.decode_step(m, batch, context)
    groups = m.param_groups()
    matmul_params = m.n_active_params_with_embedding - groups["embedding"] - groups["norms"]
    assert matmul_flops(w) == pytest.approx(2 * matmul_params * batch, rel=1e-12)
    # total = 2 x params x tokens + the attention term (+ small elementwise work)
    if m.mla is None:
        attention = 2 * batch * m.num_heads * context * 2 * m.head_dim * m.num_layers
        assert w.flops == pytest.approx(2 * matmul_params * batch + attention, rel=0.01)


def test_prefill_flops_by_hand():
    m = rl.get_model("llama-2-7b")
    B, T = 2, 2048
    w = rl.prefill(m, B, T)
    body = m.n_params - 2 * m.vocab_size * m.hidden_size - m.param_groups()["norms"]
    lm_head = m.vocab_size * m.hidden_size
    attention = m.num_layers * 2 * B * m.num_heads * (T * (T + 1) / 2) * 2 * m.head_dim  # causal
    assert matmul_flops(w) == pytest.approx(2 * body * B * T + 2 * lm_head * B, rel=1e-12)
    assert w.flops == pytest.approx(2 * body * B * T + 2 * lm_head * B + attention, rel=0.01)


@pytest.mark.parametrize("name", ["llama-2-13b", "llama-3-8b"])
def test_prefill_attention_equals_sum_of_decode_steps(name):
    """Causal prefill over T tokens does the attention work of T decode steps at contexts 1..T."""
    T = 300
    prefill_attn = sum(p.flops for p in rl.prefill(name, 1, T).leaves() if p.name.startswith("attention"))
    steps = rl.decode_step(name, 1, np.arange(1, T + 1))
    decode_attn = sum(np.sum(p.flops) for p in steps.leaves() if p.name.startswith("attention"))
    assert prefill_attn == pytest.approx(decode_attn, rel=1e-12)


def test_decode_attention_intensity_is_group_size():
    """Erratum 6: decode attention does G FLOP per bf16 byte of KV cache (Llama-3-8B: G = 4)."""
    w = rl.decode_step("llama-3-8b", 1, 100_000)
    attention = next(p for p in w.leaves() if p.name.startswith("attention"))
    assert attention.intensity == pytest.approx(4, rel=0.001)


# ---------------------------------------------------------------- the central claims

@pytest.mark.parametrize("chip", ["A100", "H100", "H200", "MI300X"])
def test_prefill_compute_bound_decode_memory_bound(chip):
    for name in ("llama-2-7b", "llama-3-70b"):
        assert rl.estimate(rl.prefill(name, 1, 2048), chip).bound == "compute"
        assert rl.estimate(rl.decode_step(name, 1, 2048), chip).bound == "memory"


def test_weight_matmul_intensity_tracks_batch():
    """Intensity of a decode weight matmul is ~batch FLOP/byte in bf16 (batch << hidden size)."""
    for batch in (1, 8, 64):
        w = rl.decode_step("llama-2-70b", batch, 1)
        mlp = next(p for p in w.leaves() if p.name == "MLP down projection")
        assert mlp.intensity == pytest.approx(batch, rel=0.02 * batch ** 0.5 + 0.01)


def test_weight_only_int4_quarters_weight_traffic():
    bf16 = rl.decode_step("llama-2-7b", 1, 128)
    int4 = rl.decode_step("llama-2-7b", 1, 128, weight_dtype="int4")
    down = [next(p for p in w.leaves() if p.name == "MLP down projection") for w in (bf16, int4)]
    weights = 32 * 11008 * 4096
    assert down[0].bytes - down[1].bytes == pytest.approx(weights * (2 - 0.5))
    assert down[1].dtype == "bf16"  # compute stays bf16
    assert int4.flops == pytest.approx(bf16.flops)


def test_kv_dtype_only_changes_cache_traffic():
    a = rl.decode_step("llama-3-8b", 16, 8192)
    b = rl.decode_step("llama-3-8b", 16, 8192, kv_dtype="fp8")
    kv = rl.get_model("llama-3-8b").kv_cache_bytes(16, 8192)
    new_tokens = rl.get_model("llama-3-8b").kv_cache_bytes(16, 1)  # written by the cache-write kernel
    assert a.bytes - b.bytes == pytest.approx((kv + new_tokens) / 2)


def test_moe_reads_only_routed_experts_at_batch_1():
    m = rl.get_model("mixtral-8x7b")
    w = rl.decode_step(m, 1, 16)
    expert_bytes = sum(p.bytes for p in w.leaves() if p.name.startswith("MoE experts"))
    two_experts = 32 * 2 * 3 * 4096 * 14336 * 2
    assert expert_bytes == pytest.approx(two_experts, rel=0.001)
    big = rl.decode_step(m, 4096, 16)
    all_weights = sum(p.bytes for p in big.leaves() if p.name in ("MoE experts gate+up", "MoE experts down"))
    assert all_weights > 32 * 8 * 3 * 4096 * 14336 * 2  # every expert read (plus activations)


# ---------------------------------------------------------------- vectorised, validated

def test_vectorised_equals_scalar():
    batch = np.array([1, 7, 64, 300])
    context = np.array([100, 4096, 512, 30000])
    sweep = rl.estimate(rl.decode_step("llama-3-70b", batch, context), "H200").lower
    for i in range(len(batch)):
        one = rl.estimate(rl.decode_step("llama-3-70b", int(batch[i]), int(context[i])), "H200").lower
        assert sweep[i] == pytest.approx(one, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 1024), context=st.integers(1, 131072), grow=st.integers(2, 8))
def test_decode_time_grows_with_batch_and_context(batch, context, grow):
    m = rl.get_model("llama-3-8b")
    t = rl.estimate(rl.decode_step(m, batch, context), "H100").lower
    assert rl.estimate(rl.decode_step(m, batch * grow, context), "H100").lower > t
    assert rl.estimate(rl.decode_step(m, batch, context * grow), "H100").lower > t
    assert m.kv_cache_bytes(batch * grow, context) == pytest.approx(grow * m.kv_cache_bytes(batch, context))


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("nan"), "8", None])
def test_bad_sizes_raise(bad):
    with pytest.raises(ValueError, match="^batch must be"):
        rl.decode_step("llama-2-7b", bad, 128)
    with pytest.raises(ValueError, match="^prompt_len must be"):
        rl.prefill("llama-2-7b", 1, bad)


def test_unknown_model_and_dtype():
    with pytest.raises(ValueError, match="Llama-3-8B"):
        rl.get_model("llama-3-9b")
    with pytest.raises(ValueError, match="unknown dtype"):
        rl.decode_step("llama-2-7b", 1, 128, weight_dtype="int3")


def test_time_by_category_adds_up_to_kernel_sum():
    w = rl.decode_step("deepseek-v2-lite", 8, 4096)
    cats = llm.time_by_category(w, "H200")
    assert set(cats) == set(llm.CATEGORIES)
    assert sum(cats.values()) == pytest.approx(llm.kernel_sum_time(w, "H200"), rel=1e-12)
    est = rl.estimate(w, "H200")
    assert est.lower <= llm.kernel_sum_time(w, "H200") <= est.no_overlap
    assert llm.category_of("QKV projection") == "attention weights"
    assert llm.category_of("MoE experts down") == "MLP / expert weights"
    assert llm.category_of("attention (reads KV cache)") == "KV cache"


def test_extend_step_is_prefill_and_decode_at_its_ends():
    for model in ("llama-2-7b", "deepseek-v2-lite", "mixtral-8x7b"):
        a, b = llm.extend_step(model, 3, 1, 511), llm.decode_step(model, 3, 512)
        assert (a.flops, a.bytes) == pytest.approx((b.flops, b.bytes), rel=1e-12)
        c, d = llm.extend_step(model, 3, 200, 0), llm.prefill(model, 3, 200)
        assert (c.flops, c.bytes) == pytest.approx((d.flops, d.bytes), rel=1e-12)
    with pytest.raises(ValueError, match="cached_len"):
        llm.extend_step("llama-2-7b", 1, 4, -1)
    with pytest.raises(ValueError, match="logits_per_sequence"):
        llm.extend_step("llama-2-7b", 1, 4, 10, logits_per_sequence=5)
