"""Transformer configurations: shapes from each model's config.json, parameter counts, memory.

Each model is one TOML file in ``data/models/`` holding the values of its
Hugging Face config.json (with the source named). This module only reads and
counts; the FLOPs and bytes of running a model live in ``llm``. It sits beside
``hardware`` (data in, validated objects out) so that ``llm`` stays about
workloads.

Parameter counting follows the checkpoint: every weight tensor, embedding and
norm vectors included; Llama-style models have no biases.
"""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

from ..core.catalog import DATA_DIR, Catalog, Entry, build_checked, read_toml
from ..core.checks import figure, positive
from ..core.dtypes import bytes_per_element
from .hf_config import model_fields

MODEL_DIR = DATA_DIR / "models"


@dataclasses.dataclass(frozen=True)
class MoE:
    """A mixture-of-experts MLP: ``experts_per_token`` of ``num_experts`` routed experts,
    plus ``shared_experts`` that every token uses; the first ``first_dense_layers`` layers are dense."""

    num_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    shared_experts: int = 0
    first_dense_layers: int = 0


@dataclasses.dataclass(frozen=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2): K and V are rebuilt from a cached latent.

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""

    q_lora_rank: int  # 0: queries are projected directly from the hidden state
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


# How model cards count active parameters: "all" (embedding and LM head included, as Mixtral's card does) or
# "no-embedding" (the embedding table left out, as gpt-oss's card does). A model file's active_params_count names
# its card's; Model.n_active_params follows it and Model.active_params(convention) gives either.
ACTIVE_COUNTS = ("all", "no-embedding")


@dataclasses.dataclass(frozen=True)
class Model:
    """A decoder-only transformer's shapes (names as in Hugging Face config.json).

    Taught in chapter 04 (notebooks/04_attention_intensity.ipynb)."""

    name: str
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    tie_word_embeddings: bool = False
    norm: str = "rmsnorm"
    max_context: int | None = None
    moe: MoE | None = None
    mla: MLA | None = None
    qk_norm: bool = False  # RMSNorm of each head's query and key (Qwen3): 2 x head_dim weights per layer
    attention_bias: bool = False  # biases on q, k, v and o (gpt-oss)
    attention_sinks: bool = False  # one learned sink logit per head and layer (gpt-oss)
    expert_bias: bool = False  # biases on the router and on every expert's projections (gpt-oss)
    sliding_window: int | None = None  # positions a sliding-window layer attends to
    sliding_layers: int = 0  # how many layers use the window (the rest attend to the whole context)
    mlp: str = "gated"  # "gated" (SwiGLU: gate, up, down) or "plain" (GPT-2/3: up, GELU, down)
    linear_bias: bool = False  # biases on every projection and norm (GPT-2/3, Megatron's GPT)
    position_embeddings: int = 0  # a learned table of this many positions (GPT); 0: rotary, no table
    aliases: tuple = ()
    family: str = ""
    sources: dict = dataclasses.field(default_factory=dict)
    notes: str = ""
    source_file: str = ""
    # how the model card counts active parameters, which n_active_params follows (ACTIVE_COUNTS)
    active_params_count: str = "all"

    def __post_init__(self):
        for field in ("hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads",
                      "head_dim", "vocab_size"):
            figure(f"model {self.name!r}: {field}", getattr(self, field), integer=True)
        self.check_shape()

    def check_shape(self):
        """What no single figure shows: heads in whole groups, a known norm, experts and layers that agree."""
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"model {self.name!r}: num_attention_heads ({self.num_heads}) must be a multiple "
                             f"of num_key_value_heads ({self.num_kv_heads})")
        if self.mlp not in ("gated", "plain"):
            raise ValueError(f"model {self.name!r}: mlp must be 'gated' or 'plain', got {self.mlp!r}")
        if self.norm not in ("rmsnorm", "layernorm"):
            raise ValueError(f"model {self.name!r}: norm must be 'rmsnorm' or 'layernorm', got {self.norm!r}")
        if self.moe and not (0 < self.moe.experts_per_token <= self.moe.num_experts):
            raise ValueError(f"model {self.name!r}: experts_per_token must be between 1 and num_experts")
        if self.moe and self.moe.first_dense_layers > self.num_layers:
            raise ValueError(f"model {self.name!r}: first_dense_layers exceeds the number of layers")

    # ------------------------------------------------------------ shapes
    @property
    def group_size(self):
        """Query heads per K/V head (1 for multi-head attention, >1 for grouped-query)."""
        return self.num_heads // self.num_kv_heads

    @property
    def dense_layers(self):
        """Layers with a dense MLP (all of them unless the model is a MoE)."""
        return self.num_layers if self.moe is None else self.moe.first_dense_layers

    @property
    def moe_layers(self):
        """Layers with a mixture-of-experts MLP (every layer but the dense ones)."""
        return self.num_layers - self.dense_layers

    @property
    def kv_elements_per_token_layer(self):
        """Elements cached per token per layer: K and V of every K/V head, or MLA's latent + RoPE key."""
        if self.mla:
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        return 2 * self.num_kv_heads * self.head_dim

    # ------------------------------------------------------------ parameters, per group
    def param_groups(self):
        """Parameters by role (a dict of counts); their sum is ``n_params``."""
        h, V, L = self.hidden_size, self.vocab_size, self.num_layers
        groups = {"embedding": (V + self.position_embeddings) * h,
                  "lm_head": 0 if self.tie_word_embeddings else V * h}
        groups["attention"] = L * self.attention_params_per_layer()
        per_norm = 2 if (self.norm == "layernorm" and self.linear_bias) else 1  # LayerNorm's bias vector
        groups["norms"] = per_norm * (L * 2 * h + h) + (L * self.mla.kv_lora_rank if self.mla else 0) \
            + (L * self.mla.q_lora_rank if self.mla else 0) + (L * 2 * self.head_dim if self.qk_norm else 0)
        i = self.intermediate_size
        mlp = (3 * h * i if self.mlp == "gated" else 2 * h * i) + ((i + h) if self.linear_bias else 0)
        groups["dense_mlp"] = self.dense_layers * mlp
        if self.moe:
            m = self.moe
            groups["router"] = self.moe_layers * m.num_experts * (h + self.expert_bias)
            groups["routed_experts"] = self.moe_layers * m.num_experts * self._expert_params()
            groups["shared_experts"] = self.moe_layers * m.shared_experts * 3 * h * m.expert_intermediate_size
        return groups

    def _expert_params(self):
        """One routed expert: gate, up and down projections (and, with expert_bias, their biases)."""
        h, i = self.hidden_size, self.moe.expert_intermediate_size
        return 3 * h * i + (2 * i + h if self.expert_bias else 0)

    def attention_params_per_layer(self):
        """Weights of one layer's attention projections (norm vectors not included)."""
        h, H, d = self.hidden_size, self.num_heads, self.head_dim
        if self.mla is None:
            extra = (H * d + 2 * self.num_kv_heads * d + h if (self.attention_bias or self.linear_bias) else 0) \
                + (H if self.attention_sinks else 0)
            return h * H * d + 2 * h * self.num_kv_heads * d + H * d * h + extra  # q, k, v, o
        a = self.mla
        q_dim = H * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        q = h * q_dim if a.q_lora_rank == 0 else h * a.q_lora_rank + a.q_lora_rank * q_dim
        kv_down = h * (a.kv_lora_rank + a.qk_rope_head_dim)
        kv_up = a.kv_lora_rank * H * (a.qk_nope_head_dim + a.v_head_dim)
        out = H * a.v_head_dim * h
        return q + kv_down + kv_up + out

    @property
    def n_params(self):
        """Every parameter in the checkpoint (embeddings and norms included)."""
        return int(sum(self.param_groups().values()))

    @property
    def n_active_params(self):
        """Parameters one token uses, counted as the model's card counts them (``active_params_count``): all but
        the routed experts it is not sent to, embedding and LM head included (``"all"``: Mixtral's '12.9B
        active'; = n_params if dense), or the embedding table left out too (``"no-embedding"``: gpt-oss's '5.1B
        active'). ``active_params(convention)`` gives either count for any model."""
        return self.active_params(self.active_params_count)

    @property
    def n_active_params_with_embedding(self):
        """Active parameters with the embedding table and LM head counted, whatever the card's convention: the
        count the FLOP conventions built on 6N use."""
        return self.active_params("all")

    def active_params(self, convention="all"):
        """Active parameters per token under ``convention``: "all" (embedding and LM head included) or
        "no-embedding" (the embedding table, which a token only looks a row up in, left out)."""
        if convention not in ACTIVE_COUNTS:
            raise ValueError(f"unknown active-parameter convention {convention!r}; known: {', '.join(ACTIVE_COUNTS)}")
        n = self.n_params
        if self.moe is not None:
            m = self.moe
            n -= self.moe_layers * (m.num_experts - m.experts_per_token) * self._expert_params()
        return n - self.param_groups()["embedding"] if convention == "no-embedding" else n

    def weight_bytes(self, dtype="bf16"):
        """Bytes of all weights stored in ``dtype`` (int4: half a byte; quantisation scales not counted)."""
        return self.n_params * bytes_per_element(dtype)

    def kv_bytes_per_position(self, dtype="bf16"):
        """Bytes of the KV cache of one position of one sequence (every layer). With sliding-window layers, the
        growth beyond the window (the full layers'): a product with the context then leaves out the windowed
        layers' fixed ``window`` positions, a lower figure; ``kv_cache_bytes`` counts them."""
        return (self.num_layers - self.sliding_layers) * self.kv_elements_per_token_layer * bytes_per_element(dtype)

    def kv_cache_bytes(self, batch, context, dtype="bf16"):
        """Bytes of the KV cache holding ``context`` positions for each of ``batch`` sequences. Vectorised.

        2 (K and V) x layers x kv_heads x head_dim x context x batch x bytes per element for
        MHA/GQA; layers x (kv_lora_rank + rope dim) x context x batch x bytes for MLA."""
        batch = positive("batch", batch)
        context = positive("context", context)
        return self.kv_cache_bytes_unchecked(batch, context, dtype)

    def kv_cache_bytes_unchecked(self, batch, context, dtype="bf16"):
        """``kv_cache_bytes`` for checked sizes: windowed layers hold at most ``sliding_window`` positions."""
        windowed = 0
        if self.sliding_layers:
            windowed = self.sliding_layers * self.kv_elements_per_token_layer * bytes_per_element(dtype) \
                * np.minimum(context, self.sliding_window)
        return (self.kv_bytes_per_position(dtype) * context + windowed) * batch

    def __repr__(self):
        kind = "MLA" if self.mla else ("MHA" if self.group_size == 1 else f"GQA (group {self.group_size})")
        moe = f", MoE {self.moe.experts_per_token}/{self.moe.num_experts}" if self.moe else ""
        return f"Model({self.name!r}, {self.n_params / 1e9:.3g}B params, {self.num_layers} layers, {kind}{moe})"


# ---------------------------------------------------------------- file loading

_REQUIRED_INT = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                 "num_key_value_heads", "head_dim", "vocab_size")
_MOE_FIELDS = ("num_experts", "experts_per_token", "expert_intermediate_size", "shared_experts",
               "first_dense_layers")
_MLA_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_MAY_BE_ZERO = {"moe.shared_experts", "moe.first_dense_layers", "mla.q_lora_rank"}


def load_model(path):
    """Read one model TOML file; raise ValueError naming the file, model and field."""
    path = pathlib.Path(path)
    raw = read_toml(path)
    entry = Entry(raw, f"{path.name} (model {raw.get('name', '?')!r})")
    fail = entry.fail

    def whole(table, field, label):
        if field not in table:
            fail(label, "is missing")
        return entry.figure(label, table[field], integer=True, zero_ok=label in _MAY_BE_ZERO)

    if not isinstance(raw.get("name"), str) or not raw["name"].strip():
        fail("name", "is missing")
    values = {f: whole(raw, f, f) for f in _REQUIRED_INT}
    tie = raw.get("tie_word_embeddings")
    if not isinstance(tie, bool):
        fail("tie_word_embeddings", f"must be true or false, got {tie!r}")
    sources = raw.get("sources")
    if not isinstance(sources, dict) or not str(sources.get("config", "")).strip():
        fail("sources.config", "is missing: name the config.json the values come from")
    moe = mla = None
    if "moe" in raw:
        moe = MoE(**{f: whole(raw["moe"], f, f"moe.{f}") for f in _MOE_FIELDS})
    if "mla" in raw:
        mla = MLA(**{f: whole(raw["mla"], f, f"mla.{f}") for f in _MLA_FIELDS})
        if raw["head_dim"] != mla.qk_nope_head_dim + mla.qk_rope_head_dim:
            fail("head_dim", "must equal mla.qk_nope_head_dim + mla.qk_rope_head_dim")
    max_context = whole(raw, "max_context", "max_context") if "max_context" in raw else None
    flags = {}
    for flag in ("qk_norm", "attention_bias", "attention_sinks", "expert_bias", "linear_bias"):
        flags[flag] = raw.get(flag, False)
        if not isinstance(flags[flag], bool):
            fail(flag, f"must be true or false, got {flags[flag]!r}")
    flags["mlp"] = raw.get("mlp", "gated")
    flags["position_embeddings"] = whole(raw, "position_embeddings", "position_embeddings") \
        if "position_embeddings" in raw else 0
    window = whole(raw, "sliding_window", "sliding_window") if "sliding_window" in raw else None
    sliding_layers = whole(raw, "sliding_layers", "sliding_layers") if "sliding_layers" in raw else 0
    if (window is None) != (sliding_layers == 0):
        fail("sliding_layers", "and sliding_window go together (give both, or neither)")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        fail("aliases", "must be a list of strings")
    active_count = raw.get("active_params_count", "all")
    if active_count not in ACTIVE_COUNTS:
        fail("active_params_count", f"must be one of {', '.join(ACTIVE_COUNTS)}; got {active_count!r}")
    try:
        model = build_checked(  # every figure was checked above, with the file's field in the message
            Model,
            name=raw["name"], hidden_size=values["hidden_size"], intermediate_size=values["intermediate_size"],
            num_layers=values["num_hidden_layers"], num_heads=values["num_attention_heads"],
            num_kv_heads=values["num_key_value_heads"], head_dim=values["head_dim"],
            vocab_size=values["vocab_size"], tie_word_embeddings=tie, norm=raw.get("norm", "rmsnorm"),
            max_context=max_context, moe=moe, mla=mla, **flags, sliding_window=window, sliding_layers=sliding_layers,
            aliases=tuple(aliases),
            family=raw.get("family", ""),
            sources=dict(sources), notes=raw.get("notes", ""), source_file=str(path),
            active_params_count=active_count,
        )
        model.check_shape()
        return model
    except ValueError as exc:
        raise ValueError(f"{path.name}: {exc}") from None


_CATALOG = Catalog(MODEL_DIR, load_model, "model")


def list_models(*, with_steps=False):
    """Names of every model in data/models/; ``with_steps``: only those whose decode steps are affine in the
    context, which the explorers' closed-form request sums need (not sliding-window models such as gpt-oss)."""
    names = _CATALOG.names()
    return [n for n in names if not _CATALOG.get(n).sliding_layers] if with_steps else names


def get_model(name):
    """Look up a model by name or alias, case- and punctuation-insensitive ("llama-2-7b", "Llama2 7B"); or read a
    Hugging Face config.json given as a path or as a dict (``hf_config.model_from_config``).

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb); also used in chapters 04, 05, 06, 08, 09, 10, 11, 12,
    13, 14."""
    if isinstance(name, Model):
        return name
    if isinstance(name, dict) or (isinstance(name, (str, pathlib.Path)) and str(name).endswith(".json")):
        return model_from_config(name)
    return _CATALOG.get(name)


def model_from_config(config, name=None):
    """A ``Model`` from a Hugging Face config.json, a path or its dict (``hf_config.model_fields``)."""
    fields = model_fields(config, name)
    moe, mla = fields.pop("moe"), fields.pop("mla")
    return Model(**fields, moe=MoE(**moe) if moe else None, mla=MLA(**mla) if mla else None)


def expected_experts_touched(num_experts, experts_per_token, tokens):
    """Expected number of distinct experts that ``tokens`` tokens route to, if routing is uniform
    and independent: E * (1 - (1 - k/E)^n). One token touches k experts; many touch all E. Vectorised."""
    tokens = positive("tokens", tokens)
    E, k = num_experts, experts_per_token
    return E * (1 - np.power(1 - k / E, tokens))


__all__ = ["ACTIVE_COUNTS", "expected_experts_touched", "get_model", "list_models", "load_model", "MLA", "Model",
           "model_from_config", "MODEL_DIR", "MoE"]
