"""A Hugging Face ``config.json`` (a path or a dict) as the fields of a ``Model``, without the network.

    m = rl.get_model("path/to/config.json")       # or rl.get_model({...}) with the file's fields

``model_fields`` returns the keyword arguments of ``models.Model`` (its ``moe`` and ``mla`` as dicts), so this
module needs nothing of ``models``; ``models.get_model`` builds the Model from them.

Read: Llama, Mistral, Mixtral, Qwen2, Qwen3, Qwen3-MoE and DeepSeek-V2/V3 configs (``model_type``). Refused, with
the reason: a config that lacks a field the shapes need, an unknown ``model_type``, and architectures whose
bytes this course does not count yet (sliding-window attention shorter than the context, MoE layers that are
not every layer). gpt-oss is read: biases, sinks and its alternating 128-position windows, which its steps and
KV cache count (``llm.blocks``, ``Model.kv_cache_bytes``).
"""

from __future__ import annotations

import json
import pathlib

READABLE = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss")


def _read(config):
    if isinstance(config, dict):
        return dict(config), "config"
    path = pathlib.Path(config)
    if not path.is_file():
        raise ValueError(f"no config.json at {str(path)!r}; give the path of a Hugging Face config.json or its dict")
    try:
        return json.loads(path.read_text(encoding="utf-8")), path.name
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name}: not valid JSON ({exc})") from None


def model_fields(config, name=None):
    """``Model``'s keyword arguments from a Hugging Face config (dict or path); ValueError naming what is missing or
    not read."""
    raw, where = _read(config)
    kind = raw.get("model_type")
    if kind not in READABLE:
        raise ValueError(f"{where}: model_type {kind!r} is not one this course reads; readable: {', '.join(READABLE)}")

    def need(field):
        if field not in raw or raw[field] is None:
            raise ValueError(f"{where}: field {field!r} is missing; a {kind} config.json has it")
        value = raw[field]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{where}: field {field!r} must be a whole number > 0, got {value!r}")
        return value

    hidden, layers, heads, vocab = (need(f) for f in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                                       "vocab_size"))
    max_context = raw.get("max_position_embeddings")
    window = raw.get("sliding_window")
    sliding = {}
    if kind == "gpt_oss":  # windowed and full layers alternate (layer_types); the model counts both kinds apart
        types = raw.get("layer_types") or ["sliding_attention", "full_attention"] * (layers // 2)
        sliding = dict(sliding_window=window, sliding_layers=sum(t == "sliding_attention" for t in types),
                       attention_bias=bool(raw.get("attention_bias", True)), attention_sinks=True, expert_bias=True)
    elif window and raw.get("use_sliding_window", kind in ("mistral", "mixtral")) and (max_context or 0) > window:
        raise ValueError(f"{where}: sliding-window attention ({window} positions, context {max_context}) is not "
                         f"counted yet: the KV cache of such layers stops growing at the window")
    moe = mla = None
    kv_heads = raw.get("num_key_value_heads") or heads
    head_dim = raw.get("head_dim") or hidden // heads
    intermediate = raw.get("intermediate_size")
    if kind in ("mixtral", "gpt_oss"):
        moe = _moe(need("num_local_experts"), need("num_experts_per_tok"), need("intermediate_size"))
    elif kind == "qwen3_moe":
        if raw.get("decoder_sparse_step", 1) != 1 or raw.get("mlp_only_layers"):
            raise ValueError(f"{where}: MoE layers that are not every layer (decoder_sparse_step, mlp_only_layers) "
                             f"are not read yet")
        moe = _moe(need("num_experts"), need("num_experts_per_tok"), need("moe_intermediate_size"))
        intermediate = intermediate or raw["moe_intermediate_size"]
    elif kind.startswith("deepseek"):
        if raw.get("moe_layer_freq", 1) != 1:
            raise ValueError(f"{where}: moe_layer_freq {raw['moe_layer_freq']} is not read yet (only 1)")
        moe = _moe(need("n_routed_experts"), need("num_experts_per_tok"), need("moe_intermediate_size"),
                   raw.get("n_shared_experts") or 0, raw.get("first_k_dense_replace") or 0)
        mla = dict(q_lora_rank=raw.get("q_lora_rank") or 0, kv_lora_rank=need("kv_lora_rank"),
                   qk_nope_head_dim=need("qk_nope_head_dim"), qk_rope_head_dim=need("qk_rope_head_dim"),
                   v_head_dim=need("v_head_dim"))
        head_dim, kv_heads = mla["qk_nope_head_dim"] + mla["qk_rope_head_dim"], heads
    if not intermediate:
        need("intermediate_size")
    label = name or raw.get("_name_or_path") or (where.removesuffix(".json") if where != "config" else kind)
    return dict(name=str(label), hidden_size=hidden, intermediate_size=intermediate, num_layers=layers,
                 num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim, vocab_size=vocab,
                 tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)), norm="rmsnorm",
                 max_context=max_context, moe=moe, mla=mla, qk_norm=kind in ("qwen3", "qwen3_moe"),
                 family=kind, sources={"config": where}, **sliding)


def _moe(num_experts, experts_per_token, expert_intermediate_size, shared_experts=0, first_dense_layers=0):
    return dict(num_experts=num_experts, experts_per_token=experts_per_token,
                expert_intermediate_size=expert_intermediate_size, shared_experts=shared_experts,
                first_dense_layers=first_dense_layers)


__all__ = ["model_fields", "READABLE"]
