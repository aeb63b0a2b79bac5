"""specs.hf_config: a Hugging Face config.json (path or dict) read as a Model, checked by hand counts; what it
cannot read is refused with the field or the reason named."""

import json

import pytest

import roofline_lib as rl

LLAMA_31_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
               "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
               "max_position_embeddings": 131072, "tie_word_embeddings": False}


def test_a_dict_and_a_path_give_the_same_model(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_31_8B))
    a, b = rl.get_model(LLAMA_31_8B), rl.get_model(str(path))
    assert (a.n_params, a.head_dim, a.num_kv_heads, a.max_context) == (b.n_params, 128, 8, 131072)
    # by hand: embedding and LM head 2 x 128256 x 4096; per layer q, o 2 x 4096^2, k, v 2 x 4096 x 1024,
    # MLP 3 x 4096 x 14336, two norms 2 x 4096; final norm 4096
    per_layer = 2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert a.n_params == 2 * 128256 * 4096 + 32 * per_layer + 4096 == 8_030_261_248


def test_qwen3_head_dim_and_qk_norm_by_hand():
    # Qwen3-style: head_dim given (128), not hidden / heads (5120 / 64 = 80); QK-norm adds 2 x 128 per layer
    cfg = {"model_type": "qwen3", "hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers": 64,
           "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
           "max_position_embeddings": 40960, "tie_word_embeddings": False}
    m = rl.get_model(cfg)
    attn = 5120 * 64 * 128 + 2 * 5120 * 8 * 128 + 64 * 128 * 5120
    per_layer = attn + 3 * 5120 * 25600 + 2 * 5120 + 2 * 128
    assert m.qk_norm and m.n_params == 2 * 151936 * 5120 + 64 * per_layer + 5120


def test_deepseek_v3_style_mla_and_experts():
    cfg = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
           "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
           "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
           "v_head_dim": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
           "first_k_dense_replace": 3, "moe_layer_freq": 1, "max_position_embeddings": 163840,
           "tie_word_embeddings": False}
    m = rl.get_model(cfg)
    assert m.mla.kv_lora_rank == 512 and m.head_dim == 192 and m.moe.num_experts == 256
    assert (m.dense_layers, m.moe_layers) == (3, 58)
    assert m.kv_bytes_per_position("bf16") == 61 * (512 + 64) * 2     # the latent and the RoPE key only


@pytest.mark.parametrize("change, message", [
    ({"num_hidden_layers": None}, "field 'num_hidden_layers' is missing"),
    ({"hidden_size": "4096"}, "field 'hidden_size' must be a whole number"),
    ({"model_type": "bert"}, "model_type 'bert' is not one this course reads"),
    ({"model_type": "gpt_oss"}, "field .num_local_experts. is missing"),
    ({"model_type": "mistral", "sliding_window": 4096}, "sliding-window attention \\(4096 positions"),
])
def test_what_cannot_be_read_is_refused(change, message):
    with pytest.raises(ValueError, match=message):
        rl.get_model({**LLAMA_31_8B, **change})


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no config.json at"):
        rl.get_model(str(tmp_path / "nowhere" / "config.json"))
