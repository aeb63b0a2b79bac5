"""roofline_lib.specs.models: parameter counts against published figures and a brute-force count of the
checkpoint's tensors, KV-cache bytes by hand, MoE routing by enumeration, and the model loader."""

import itertools
import math

import pytest

import roofline_lib as rl
from roofline_lib.specs import models
from roofline_lib.specs.models import load_model

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
        if m.qk_norm:
            t[p + "self_attn.q_norm.weight"] = (d,)
            t[p + "self_attn.k_norm.weight"] = (d,)
        if m.mla:
            a = m.mla
            q_dim = H * (a.qk_nope_head_dim + a.qk_rope_head_dim)
            if a.q_lora_rank:
                t[p + "self_attn.q_a_proj.weight"] = (a.q_lora_rank, h)
                t[p + "self_attn.q_a_layernorm.weight"] = (a.q_lora_rank,)
                t[p + "self_attn.q_b_proj.weight"] = (q_dim, a.q_lora_rank)
            else:
                t[p + "self_attn.q_proj.weight"] = (q_dim, h)
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
    # DeepSeek-V2-Lite's published 2.4B activated leaves the input embedding table out, and so does the course's
    # count by default (its card's convention); with the table, 102,400 x 2,048 more
    ds = rl.get_model("deepseek-v2-lite")
    assert ds.n_active_params == pytest.approx(2.4e9, rel=0.03) == ds.active_params("no-embedding")
    assert ds.active_params("all") - ds.n_active_params == ds.vocab_size * ds.hidden_size == 209_715_200
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


def test_expected_experts_touched_by_enumeration():
    """E(1 - (1 - k/E)^n) against an exact average over every routing of n tokens to k of E experts."""
    for E, k, n in ((4, 2, 2), (5, 2, 3), (6, 3, 2)):
        choices = list(itertools.combinations(range(E), k))
        routings = list(itertools.product(choices, repeat=n))
        mean = sum(len(set().union(*r)) for r in routings) / len(routings)
        assert models.expected_experts_touched(E, k, n) == pytest.approx(mean, rel=1e-12)


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
    (lambda s: s.replace("vocab_size = 100", 'vocab_size = 100\nactive_params_count = "most"'), "active_params_count"),
])
def test_loader_names_file_model_and_field(tmp_path, edit, field):
    path = tmp_path / "toy.toml"
    path.write_text(edit(GOOD))
    with pytest.raises(ValueError) as info:
        load_model(path)
    message = str(info.value)
    assert "toy.toml" in message and "Toy" in message and field in message


def test_every_data_file_loads_and_has_sources():
    names = models.list_models()
    assert len(names) == 23
    for name in names:
        m = rl.get_model(name)
        # a config.json, or for the training-scale GPT references (no config.json exists) the paper's table
        assert m.sources["config"].strip() and ("config.json" in m.sources["config"]
                                                or (m.family.startswith("GPT") and "Table" in m.sources["config"]))
        # the Llama/Mixtral convention; Qwen3, gpt-oss and MLA give head_dim of their own
        assert m.head_dim * m.num_heads == m.hidden_size or m.mla or m.family.startswith(("Qwen3", "gpt-oss"))


# Published totals (and active parameters for MoE) from the model cards, against the count from the config's shapes:
# within 3 % (active within 6 %), as a checkpoint's own count rounds to the card's figure.
CARDS = {
    "Llama-3.1-8B": (8.0e9, None), "Llama-3.1-70B": (70e9, None), "Llama-3.1-405B": (405e9, None),
    "Mixtral-8x22B": (141e9, 39e9), "Qwen3-8B": (8.2e9, None), "Qwen3-32B": (32.8e9, None),
    "Qwen3-30B-A3B": (30.5e9, 3.3e9), "Qwen3-235B-A22B": (235e9, 22e9), "DeepSeek-V3": (671e9, 37e9),
}


@pytest.mark.parametrize("name", sorted(CARDS))
def test_current_models_match_their_cards(name):
    total, active = CARDS[name]
    m_brute = rl.get_model(name)
    assert sum(math.prod(shape) for shape in checkpoint_tensors(m_brute).values()) == m_brute.n_params
    m = rl.get_model(name)
    assert m.n_params == pytest.approx(total, rel=0.03)
    if active:
        assert m.n_active_params == pytest.approx(active, rel=0.06)


# Llama 3.2's card (meta-llama/llama-models models/llama3_2/MODEL_CARD.md): "1B (1.23B)", "3B (3.21B)", "Shared
# Embeddings: Yes". The count by hand from config.json: per layer q and o (h x H d each), k and v (h x 8 d each), a
# gated MLP 3 h i and two norms; one 128256 x h table, tied, so no lm_head.weight; the final norm.
LLAMA_32 = {"Llama-3.2-1B": (2048, 16, 32, 64, 8192, 1.23e9), "Llama-3.2-3B": (3072, 28, 24, 128, 8192, 3.21e9)}


@pytest.mark.parametrize("name", sorted(LLAMA_32))
def test_llama_32_tied_embeddings_counted_once(name):
    h, L, H, d, i, card = LLAMA_32[name]
    m = rl.get_model(name)
    per_layer = 2 * h * H * d + 2 * h * 8 * d + 3 * h * i + 2 * h
    assert m.n_params == L * per_layer + 128256 * h + h
    assert sum(math.prod(shape) for shape in checkpoint_tensors(m).values()) == m.n_params
    assert "lm_head.weight" not in checkpoint_tensors(m)
    # the card truncates to three figures: 1,235,814,400 is "1.23B", 3,212,749,824 "3.21B"
    assert math.floor(m.n_params / 1e7) / 100 == pytest.approx(card / 1e9)
    assert m.param_groups()["lm_head"] == 0 and m.tie_word_embeddings
    assert rl.get_model(name.lower().replace("llama-", "llama")) is m  # the alias llama3.2-1b


def test_llama_31_405b_by_hand():
    # 126 layers of q, o (16384^2 each), k, v (16384 x 1024 each), a gated MLP 3 x 16384 x 53248, two norms; embedding
    # and LM head 128256 x 16384 each; final norm
    per_layer = 2 * 16384**2 + 2 * 16384 * 1024 + 3 * 16384 * 53248 + 2 * 16384
    assert rl.get_model("llama-3.1-405b").n_params == 126 * per_layer + 2 * 128256 * 16384 + 16384


def test_deepseek_v3_experts_by_hand():
    m = rl.get_model("deepseek-v3")
    # 58 MoE layers of 256 routed + 1 shared expert of 3 x 7168 x 2048, 8 routed active
    assert m.param_groups()["routed_experts"] == 58 * 256 * 3 * 7168 * 2048
    assert m.n_params - m.n_active_params == 58 * (256 - 8) * 3 * 7168 * 2048


def test_gpt_oss_by_hand():
    # gpt-oss-120b: 36 layers; attention q, o 2880 x 4096, k, v 2880 x 512, their biases (4096 + 2 x 512 + 2880)
    # and 64 sinks; 128 experts of a gated MLP 3 x 2880 x 2880 with biases 2 x 2880 + 2880; router 128 x 2880 + 128;
    # two norms; embedding and LM head 201088 x 2880; the card: "117B parameters with 5.1B active parameters"
    attention = 2 * 2880 * 4096 + 2 * 2880 * 512 + (4096 + 2 * 512 + 2880) + 64
    experts = 128 * (3 * 2880 * 2880 + 3 * 2880)
    per_layer = attention + experts + 128 * 2880 + 128 + 2 * 2880
    m = rl.get_model("gpt-oss-120b")
    assert m.n_params == 36 * per_layer + 2 * 201088 * 2880 + 2880
    assert m.n_params == pytest.approx(117e9, rel=0.03)
    # the card's active count leaves out the embedding table, and so does n_active_params for gpt-oss: everything
    # but 124 of the 128 experts in each of 36 layers, less the 201088 x 2880 table: 5.13e9 (the card: "5.1B")
    unused_experts = 36 * (128 - 4) * (3 * 2880 * 2880 + 3 * 2880)
    assert m.active_params_count == "no-embedding"
    assert m.n_active_params == m.n_params - unused_experts - 201088 * 2880
    assert m.n_active_params == pytest.approx(5.1e9, rel=0.01)
    # the other count, embedding table included, stays available: about 5.7e9
    assert m.n_active_params_with_embedding == m.n_params - unused_experts == m.active_params("all")
    assert m.n_active_params_with_embedding == pytest.approx(5.71e9, rel=0.001)
    small = rl.get_model("gpt-oss-20b")
    assert small.n_params == pytest.approx(21e9, rel=0.03)
    assert small.n_active_params == pytest.approx(3.6e9, rel=0.01)  # the card: "3.6B active"


def test_active_parameter_conventions():
    # Mixtral's card counts the embedding and LM head ("12.9B active"): its default count is "all"
    mixtral = rl.get_model("mixtral-8x7b")
    assert mixtral.active_params_count == "all" and mixtral.n_active_params == mixtral.active_params("all")
    assert mixtral.active_params("all") - mixtral.active_params("no-embedding") == 32000 * 4096
    with pytest.raises(ValueError, match="unknown active-parameter convention 'tokens'; known: all, no-embedding"):
        mixtral.active_params("tokens")


def test_sliding_window_kv_cache_by_hand():
    # gpt-oss-120b: 2 x 8 KV heads x 64 = 1024 elements per position and layer, bf16; 18 full layers hold every
    # position, 18 windowed layers at most 128
    m = rl.get_model("gpt-oss-120b")
    per_layer = 1024 * 2
    assert m.kv_cache_bytes(1, 4096) == 18 * per_layer * 4096 + 18 * per_layer * 128
    assert m.kv_cache_bytes(3, 100) == 3 * 36 * per_layer * 100            # inside the window every layer grows
    assert m.kv_bytes_per_position() == 18 * per_layer                       # the growth beyond the window


def test_sliding_window_attention_by_hand():
    from roofline_lib.llm.blocks import keys_read, pairs

    # a decode query sees min(context, 128) keys; a 1000-token prefill sum_j min(j, 128) = 128 x 129 / 2 + 872 x 128
    assert pairs(1, 4096, True, 128) == 128 and keys_read(1, 4096, 128) == 128
    assert pairs(1000, 1000, True, 128) == 128 * 129 / 2 + 872 * 128 and keys_read(1000, 1000, 128) == 1000
    assert pairs(1, 50, True, 128) == 50
    # a decode step reads the weights, the full layers' whole cache and the windowed layers' last 128 positions
    full = rl.decode_step("gpt-oss-120b", 1, 4096)
    longer = rl.decode_step("gpt-oss-120b", 1, 8192)
    assert longer.bytes - full.bytes == pytest.approx(18 * 1024 * 2 * 4096)
    with pytest.raises(ValueError, match="not affine in the context"):
        rl.serving.request("gpt-oss-120b", "H200", 1, 512, 128)


@pytest.mark.parametrize("name, h, L, V, published", [("gpt-3-175b", 12288, 96, 50257, 174.6e9),
                                                      ("gpt-530b", 20480, 105, 51200, 529.6e9)])
def test_gpt_references_by_megatrons_formula(name, h, L, V, published):
    # Narayanan et al. 2021: P = 12 l h^2 (1 + 13 / 12h + (V + s) / 12lh), s = 2048 learned positions, tied
    # embeddings; plus the final LayerNorm's 2h, which the formula leaves out
    m = rl.get_model(name)
    assert m.n_params == 12 * L * h**2 + 13 * L * h + (V + 2048) * h + 2 * h
    assert m.n_params == pytest.approx(published, rel=0.001)
    # the plain MLP: up and down, 4h each way (no gate), so 8 h^2 of weights per layer
    assert m.param_groups()["dense_mlp"] == L * (8 * h * h + 5 * h)
