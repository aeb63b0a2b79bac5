"""Tests of roofline_lib.models and roofline_lib.llm against independent values: published
parameter counts, a brute-force count of the checkpoint's tensors, llm-analysis's worked example,
hand derivations of FLOPs and bytes, and an exact enumeration of MoE routing."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_lib as rl
from roofline_lib import llm
from roofline_lib.models import load_model

# ---------------------------------------------------------------- parameter counts

# Exact checkpoint counts (sum of tensor sizes of the Hugging Face checkpoints), and the
# rounded figures of the model cards / papers.
PUBLISHED = {
    "Llama-2-7B": 6.74e9,
    "Llama-2-13B": 13.0e9,
    "Llama-2-70B": 69.0e9,
    "Llama-3-8B": 8.03e9,
    "Llama-3-70B": 70.6e9,
    "Mixtral-8x7B": 46.7e9,
    "DeepSeek-V2-Lite": 15.7e9,
}
CHECKPOINT_EXACT = {
    "Llama-2-7B": 6_738_415_616,
    "Llama-2-13B": 13_015_864_320,
    "Llama-2-70B": 68_976_648_192,
    "Llama-3-8B": 8_030_261_248,
    "Llama-3-70B": 70_553_706_496,
    "Mixtral-8x7B": 46_702_792_704,
}


def checkpoint_tensors(m):
    """Brute force: the tensor names and shapes of the Hugging Face checkpoint, built from the config."""
    h, H, Hkv, d, V = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim, m.vocab_size
    t = {"model.embed_tokens.weight": (V, h), "model.norm.weight": (h,)}
    if not m.tie_word_embeddings:
        t["lm_head.weight"] = (V, h)
    for layer in range(m.num_layers):
        p = f"model.layers.{layer}."
        t[p + "input_layernorm.weight"] = (h,)
        t[p + "post_attention_layernorm.weight"] = (h,)
        if m.mla:
            a = m.mla
            t[p + "self_attn.q_proj.weight"] = (H * (a.qk_nope_head_dim + a.qk_rope_head_dim), h)
            t[p + "self_attn.kv_a_proj_with_mqa.weight"] = (a.kv_lora_rank + a.qk_rope_head_dim, h)
            t[p + "self_attn.kv_a_layernorm.weight"] = (a.kv_lora_rank,)
            t[p + "self_attn.kv_b_proj.weight"] = (H * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank)
            t[p + "self_attn.o_proj.weight"] = (h, H * a.v_head_dim)
        else:
            for name, rows in (("q", H * d), ("k", Hkv * d), ("v", Hkv * d)):
                t[p + f"self_attn.{name}_proj.weight"] = (rows, h)
            t[p + "self_attn.o_proj.weight"] = (h, H * d)
        if m.moe is None or layer < m.moe.first_dense_layers:
            i = m.intermediate_size
            t[p + "mlp.gate_proj.weight"] = (i, h)
            t[p + "mlp.up_proj.weight"] = (i, h)
            t[p + "mlp.down_proj.weight"] = (h, i)
        else:
            e = m.moe
            i = e.expert_intermediate_size
            t[p + "mlp.gate.weight"] = (e.num_experts, h)
            for x in range(e.num_experts):
                for w, shape in (("w1", (i, h)), ("w2", (h, i)), ("w3", (i, h))):
                    t[p + f"mlp.experts.{x}.{w}.weight"] = shape
            if e.shared_experts:
                s = e.shared_experts * i
                t[p + "mlp.shared_experts.gate_proj.weight"] = (s, h)
                t[p + "mlp.shared_experts.up_proj.weight"] = (s, h)
                t[p + "mlp.shared_experts.down_proj.weight"] = (h, s)
    return t


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_param_count_matches_brute_force_and_published(name):
    m = rl.get_model(name)
    brute = sum(math.prod(shape) for shape in checkpoint_tensors(m).values())
    assert m.n_params == brute
    assert m.n_params == pytest.approx(PUBLISHED[name], rel=0.005)
    if name in CHECKPOINT_EXACT:
        assert m.n_params == CHECKPOINT_EXACT[name]


def test_active_params_of_moe_models():
    # Mixtral's 12.9B active includes embeddings and LM head.
    assert rl.get_model("mixtral-8x7b").n_active_params == pytest.approx(12.9e9, rel=0.005)
    # DeepSeek-V2-Lite's published 2.4B activated leaves the input embedding table out.
    ds = rl.get_model("deepseek-v2-lite")
    assert ds.n_active_params - ds.vocab_size * ds.hidden_size == pytest.approx(2.4e9, rel=0.03)
    # a dense model uses every parameter
    assert rl.get_model("llama-3-8b").n_active_params == rl.get_model("llama-3-8b").n_params


def test_weight_bytes_per_dtype():
    m = rl.get_model("llama-2-7b")
    assert m.weight_bytes("bf16") == 2 * 6_738_415_616
    assert m.weight_bytes("int8") == 6_738_415_616
    assert m.weight_bytes("int4") == 6_738_415_616 / 2


# ---------------------------------------------------------------- KV cache

def test_kv_cache_bytes_by_hand():
    # Llama-2-7B: 2 (K,V) x 32 layers x 32 heads x 128 x 2 bytes = 512 KiB per token
    assert rl.get_model("llama-2-7b").kv_cache_bytes(1, 1) == 524_288
    # Llama-3-70B (GQA, 8 KV heads): 2 x 80 x 8 x 128 x 2 = 320 KiB per token; fp8 halves it
    m = rl.get_model("llama-3-70b")
    assert m.kv_cache_bytes(8, 4096, "bf16") == 327_680 * 8 * 4096
    assert m.kv_cache_bytes(8, 4096, "fp8") == 327_680 * 8 * 4096 / 2
    # DeepSeek-V2-Lite (MLA): 27 layers x (512 latent + 64 RoPE key) x 2 bytes per token
    assert rl.get_model("deepseek-v2-lite").kv_cache_bytes(1, 1) == 27 * 576 * 2


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
    matmul_params = m.n_active_params - groups["embedding"] - groups["norms"]
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


def test_expected_experts_touched_by_enumeration():
    """E(1 - (1 - k/E)^n) against an exact average over every routing of n tokens to k of E experts."""
    for E, k, n in ((4, 2, 2), (5, 2, 3), (6, 3, 2)):
        choices = list(itertools.combinations(range(E), k))
        routings = list(itertools.product(choices, repeat=n))
        mean = sum(len(set().union(*r)) for r in routings) / len(routings)
        assert rl.llm.expected_experts_touched(E, k, n) == pytest.approx(mean, rel=1e-12)


# ---------------------------------------------------------------- memory fit

def test_memory_fit_by_hand():
    m = rl.get_model("llama-2-70b")  # 137.95 GB of bf16 weights
    assert not llm.fits(m, "A100", 1, 128)
    assert llm.fits(m, "H200", 1, 128)
    # H200 as nvidia-smi reports it, 143,771 MiB = 150,754,820,096 B:
    # (150,754,820,096 - 2 x 68,976,648,192) / (4096 x 327,680 B) = 9.54 -> 9 sequences of 4096
    assert llm.max_batch(m, "H200", 4096) == 9
    assert llm.max_batch(m, "A100", 4096) == 0
    # Llama-3-8B on an A100 80GB (81,920 MiB = 85,899,345,920 B), 8K context:
    # (85,899,345,920 - 16,060,522,496) / (8192 x 131,072 B) = 65.04 -> 65
    assert llm.max_batch("llama-3-8b", "A100", 8192) == 65
    # vLLM's 0.9: (77,309,411,328 - 16,060,522,496) / 1,073,741,824 = 57.04 -> 57
    assert llm.max_batch("llama-3-8b", "A100", 8192, usable_fraction=0.9) == 57
    # and half a GiB of CUDA context inside it: 60,712,017,920 / 1,073,741,824 = 56.54 -> 56
    assert llm.max_batch("llama-3-8b", "A100", 8192, usable_fraction=0.9, reserved_bytes=2**29) == 56
    assert list(llm.max_batch("llama-3-8b", "A100", [4096, 8192])) == [130, 65]


def test_llama_3_70b_bf16_fits_one_h200():
    # 70,553,706,496 params x 2 B = 141.1e9 B: more than "141 GB" x 1e9, less than the 150.75e9 B the driver reports
    w = rl.get_model("llama-3-70b").weight_bytes("bf16")
    assert 141e9 < w < 143771 * 2**20
    assert llm.fits("llama-3-70b", "H200", 1, 1)
    assert not llm.fits("llama-3-70b", "H200", 1, 1, usable_fraction=0.9)   # but not inside vLLM's default share


@pytest.mark.parametrize("kwargs, message", [
    (dict(usable_fraction=1.5), "in \\(0, 1\\]"),
    (dict(usable_fraction=0), "usable_fraction must be finite and > 0"),
    (dict(reserved_bytes=-1), "reserved_bytes must be a finite number of bytes >= 0"),
    (dict(reserved_bytes=float("nan")), "reserved_bytes must be"),
    (dict(reserved_bytes=1e15), "leaves no memory"),
])
def test_usable_memory_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        llm.max_batch("llama-3-8b", "A100", 4096, **kwargs)


# ---------------------------------------------------------------- fusion and occupancy

def test_gated_mlp_fusion_saves_the_intermediates():
    n, h, i = 16, 4096, 11008
    unfused = llm.gated_mlp_chain(n, h, i, "bf16")
    fused = llm.gated_mlp_chain(n, h, i, "bf16", fused=True)
    # unfused reads x twice and moves 8 [n, i] arrays (G, U written; G read; A written, read; U read; P written,
    # read); fused moves P twice
    assert unfused.bytes - fused.bytes == 2 * (n * h + 6 * n * i)
    assert unfused.flops == pytest.approx(fused.flops)


def test_attention_fusion_saves_the_score_matrix():
    B, H, T, S, d = 1, 32, 512, 512, 128
    unfused = llm.attention_chain(B, H, H, T, S, d)
    fused = llm.attention_chain(B, H, H, T, S, d, fused=True)
    assert unfused.bytes - fused.bytes == 4 * 2 * B * H * T * S  # S written, read; P written, read
    assert fused.bytes == rl.attention(B, H, H, T, S, d).bytes
    assert fused.flops == rl.attention(B, H, H, T, S, d).flops


def test_occupancy_model():
    assert llm.sm_utilisation(32, 132) == pytest.approx(32 / 132)
    assert llm.sm_utilisation(132, 132) == 1
    assert llm.sm_utilisation(133, 132) == pytest.approx(133 / 264)  # a second, nearly empty wave
    # Llama-2-7B, batch 1: FlashAttention-2 launches 32 blocks; FlashDecoding splits the KV sequence
    splits = llm.flash_decoding_splits("llama-2-7b", "H200", 1, 32768)
    # 1, 2, 3 splits: 24 %, 48 %, 73 % of 132 SMs; 4 splits: 128 blocks, 97 %, within 85 % of the best
    assert splits == 4
    slow = llm.decode_attention_time("llama-2-7b", "H200", 1, 32768)
    fast = llm.decode_attention_time("llama-2-7b", "H200", 1, 32768, splits=splits)
    assert slow / fast == pytest.approx(4, rel=1e-9)
    # short context: chunks of at least 256 positions allow only 2 splits
    assert llm.flash_decoding_splits("llama-2-7b", "H200", 1, 600) == 2
    assert list(llm.flash_decoding_splits("llama-2-7b", "H200", [1, 33], 32768)) == [4, 1]
    # at large batch the plain kernel already fills the chip
    assert llm.sm_utilisation(llm.decode_attention_blocks("llama-2-7b", 33), 132) == 1


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
    with pytest.raises(ValueError):
        rl.decode_step("llama-2-7b", bad, 128)
    with pytest.raises(ValueError):
        rl.prefill("llama-2-7b", 1, bad)


def test_unknown_model_and_dtype():
    with pytest.raises(ValueError, match="Llama-3-8B"):
        rl.get_model("llama-3-9b")
    with pytest.raises(ValueError, match="unknown dtype"):
        rl.decode_step("llama-2-7b", 1, 128, weight_dtype="int3")


GOOD = """
name = "Toy"
hidden_size = 64
intermediate_size = 128
num_hidden_layers = 2
num_attention_heads = 4
num_key_value_heads = 2
head_dim = 16
vocab_size = 100
tie_word_embeddings = true
[sources]
config = "made up for a test"
"""


def test_loader_accepts_a_good_file(tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(GOOD)
    m = load_model(path)
    # tied: one 100 x 64 table; per layer q, o 64x64, k, v 64x32, MLP 3 x 64 x 128, 2 norms; final norm
    assert m.n_params == 6400 + 2 * (2 * 4096 + 2 * 2048 + 3 * 8192 + 128) + 64


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.replace("hidden_size = 64\n", ""), "hidden_size"),
    (lambda s: s.replace("vocab_size = 100", 'vocab_size = "100"'), "vocab_size"),
    (lambda s: s.replace("num_hidden_layers = 2", "num_hidden_layers = -2"), "num_hidden_layers"),
    (lambda s: s.replace("head_dim = 16", "head_dim = 0"), "head_dim"),
    (lambda s: s.replace("tie_word_embeddings = true", "tie_word_embeddings = 1"), "tie_word_embeddings"),
    (lambda s: s.replace('config = "made up for a test"', ""), "sources.config"),
])
def test_loader_names_file_model_and_field(tmp_path, edit, field):
    path = tmp_path / "toy.toml"
    path.write_text(edit(GOOD))
    with pytest.raises(ValueError) as info:
        load_model(path)
    message = str(info.value)
    assert "toy.toml" in message and "Toy" in message and field in message


def test_every_data_file_loads_and_has_sources():
    names = llm.list_models()
    assert len(names) == 7
    for name in names:
        m = rl.get_model(name)
        assert m.sources["config"].strip() and "config.json" in m.sources["config"]
        assert m.head_dim * m.num_heads == m.hidden_size or m.mla  # the Llama/Mixtral convention


def test_time_by_category_adds_up_to_kernel_sum():
    w = rl.decode_step("deepseek-v2-lite", 8, 4096)
    cats = llm.time_by_category(w, "H200")
    assert set(cats) == set(llm.CATEGORIES)
    assert sum(cats.values()) == pytest.approx(llm.kernel_sum_time(w, "H200"), rel=1e-12)
    est = rl.estimate(w, "H200")
    assert est.lower <= llm.kernel_sum_time(w, "H200") <= est.upper
    assert llm.category_of("QKV projection") == "attention weights"
    assert llm.category_of("MoE experts down") == "MLP / expert weights"
    assert llm.category_of("attention (reads KV cache)") == "KV cache"


def test_llm_explorer_updates_in_place():
    import matplotlib

    matplotlib.use("Agg")
    ex = rl.widgets.LLMExplorer()
    first = dict(ex.last)
    widths = [b.get_width() for b in ex.bars]
    ex.controls["context"].value = 65536
    ex.controls["weight_dtype"].value = "int4"
    ex.refresh()
    assert ex.last != first
    kv = list(rl.llm.CATEGORIES).index("KV cache")
    assert ex.bars[kv].get_width() > widths[kv]  # a longer context reads more KV cache
    ex.controls["model"].value = "Llama-2-70B"
    ex.controls["chip"].value = "A100 80GB SXM4"
    assert "does NOT fit" in ex.refresh()["memory: weights + KV cache"]


def test_flash_attn_split_heuristic_matches_its_own_comments():
    # flash_api.cpp: "if we have batch * n_heads = 48 and we have 108 SMs, having 2 splits (efficiency = 0.89)
    # is better than having 3 splits (efficiency = 0.67)"
    assert llm.flash_attn_num_splits_heuristic(48, 108, 1000) == 2
    # enough blocks for 80 % of the slots: no split
    assert llm.flash_attn_num_splits_heuristic(87, 108, 1000) == 1
    # "if we have 64 blocks and choose 11 splits, we'll have 6 * 10 + 4 blocks. If we choose 12 splits ...
    # it's 11 splits anyway": a split count that does not shorten the runs is skipped. 10 blocks on 100 slots,
    # 64 KV blocks: 10 splits fill every slot (best 1.0); 9 would reach 0.9 but cuts the 64 blocks into runs
    # of 8, as 8 splits already do, so it is not eligible and the answer is 10, not 9
    assert llm.flash_attn_num_splits_heuristic(10, 100, 64) == 10


def test_flash_attn_picks_7_splits_where_the_course_model_picks_4():
    # Llama-2-7B, batch 1, 32K context, H100 SXM (132 SMs): 32 blocks on 264 slots, 256 KV blocks of 128
    assert llm.flash_attn_num_splits("llama-2-7b", "H100", 1, 32768) == 7
    assert llm.flash_decoding_splits("llama-2-7b", "H100", 1, 32768) == 4   # one block per SM: 128 / 132
    with pytest.raises(ValueError, match="whole number"):
        llm.flash_attn_num_splits("llama-2-7b", "H100", 1.5, 32768)
