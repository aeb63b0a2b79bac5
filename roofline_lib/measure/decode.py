"""One decode step of a dense transformer in PyTorch, with random weights: the thing ``rl.llm.decode_step``
bounds, built on the learner's device so that the bound can meet a measurement.

    m = DecodeModel(rl.get_model("Llama-3.1-8B"), batch=1, context=1024, device="cuda", dtype="bf16")
    m.step()                   # one token for each sequence: every weight read once, `context` cached positions
    measure_decode(m)          # its time per step, eager and (on CUDA) replayed as a CUDA graph

The shapes are the course's ``Model``'s (hidden, heads, KV heads, head_dim, a gated MLP, the vocabulary), so
the weights and the KV cache hold the model's bytes (``weight_bytes``, ``kv_bytes``; a step reads all of them
but the embedding table, of which it reads one row per token, as the bound counts). The
weights are random: no download, and no FLOP or byte depends on their values. Dense, gated, rotary models
without biases are built (Llama, Mistral, Qwen3 with its query/key norms); others are refused.

Attention reads the cache as it is (grouped-query attention without copying K and V per head); the new
token's key and value are written at position ``context - 1``, so every step attends to ``context``
positions, the new one included, as ``decode_step`` counts them.
"""

from __future__ import annotations

import copy
import math

from ..core.checks import positive
from ..specs.models import get_model
from .device import pick_device
from .torch_timing import _timer, _torch, time_on_device

TORCH_DTYPES = ("fp32", "bf16", "fp16")
ROPE_THETA = 500_000.0  # Llama 3's; the rotation's angles change no FLOP or byte
NORM_EPS = 1e-5


def _refuse_unbuilt(m):
    unsupported = [what for what, present in (
        ("mixture of experts", m.moe), ("multi-head latent attention", m.mla), ("attention biases", m.attention_bias),
        ("attention sinks", m.attention_sinks), ("projection biases", m.linear_bias), ("a plain MLP", m.mlp != "gated"),
        ("learned position embeddings", m.position_embeddings), ("sliding-window layers", m.sliding_layers),
        ("LayerNorm", m.norm != "rmsnorm")) if present]
    if unsupported:
        raise ValueError(f"DecodeModel builds dense, gated, rotary models without biases (Llama, Mistral, Qwen3); "
                         f"{m.name} has {', '.join(unsupported)}")


class DecodeModel:
    """A dense transformer's weights and KV cache on ``device``, random, in ``dtype`` ("fp32", "bf16" or
    "fp16"), for ``batch`` sequences of ``context`` positions. ``step()`` runs one decode step."""

    def __init__(self, model, batch, context, *, device="cpu", dtype="bf16", seed=0):
        torch = self.torch = _torch()
        m = self.model = get_model(model)
        _refuse_unbuilt(m)
        self.batch = positive("batch", batch, integer=True)
        self.context = positive("context", context, integer=True)
        if dtype not in TORCH_DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(TORCH_DTYPES)}, got {dtype!r}")
        self.dtype_name, self.device = dtype, pick_device(device, torch)
        t = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        gen = torch.Generator(device=self.device).manual_seed(seed)
        h, d, q_dim, kv_dim = m.hidden_size, m.head_dim, m.num_heads * m.head_dim, m.num_kv_heads * m.head_dim

        def weight(*shape, scale=None):
            # made where it lives, in its own format (an 8B model's weights are made in a second on a GPU);
            # scaled so that activations stay of order one through every layer
            w = torch.randn(*shape, generator=gen, device=self.device, dtype=t)
            return w.mul_(scale if scale is not None else 1 / math.sqrt(shape[-1]))

        def ones(n):
            return torch.ones(n, device=self.device, dtype=t)

        self.embed = weight(m.vocab_size, h, scale=1.0)
        self.layers = []
        for _ in range(m.num_layers):
            layer = {"attn_norm": ones(h), "wq": weight(q_dim, h), "wk": weight(kv_dim, h), "wv": weight(kv_dim, h),
                     "wo": weight(h, q_dim), "mlp_norm": ones(h), "w_gate": weight(m.intermediate_size, h),
                     "w_up": weight(m.intermediate_size, h), "w_down": weight(h, m.intermediate_size)}
            if m.qk_norm:
                layer |= {"q_norm": ones(d), "k_norm": ones(d)}
            self.layers.append(layer)
        self.final_norm = ones(h)
        self.lm_head = self.embed if m.tie_word_embeddings else weight(m.vocab_size, h)
        self._t, self._gen = t, gen
        self._make_cache()

    def _make_cache(self):
        torch, m = self.torch, self.model
        shape = (m.num_layers, self.batch, m.num_kv_heads, self.context, m.head_dim)
        self.k_cache = torch.randn(*shape, generator=self._gen, device=self.device, dtype=self._t)
        self.v_cache = torch.randn(*shape, generator=self._gen, device=self.device, dtype=self._t)
        self.tokens = torch.randint(0, m.vocab_size, (self.batch,), generator=self._gen, device=self.device)
        self.cos, self.sin = self._rope(torch.tensor([self.context - 1], dtype=torch.float32))

    def with_cache(self, batch, context):
        """The same weights (shared, not copied) with a new KV cache for ``batch`` sequences of ``context``."""
        other = copy.copy(self)
        other.batch = positive("batch", batch, integer=True)
        other.context = positive("context", context, integer=True)
        other._make_cache()
        return other

    # ------------------------------------------------------------------ what it holds

    def tensors(self):
        """Every weight tensor, each once (a tied head is the embedding)."""
        out = [self.embed, self.final_norm] + [w for layer in self.layers for w in layer.values()]
        return out if self.lm_head is self.embed else out + [self.lm_head]

    def n_params(self):
        """Elements of every weight tensor the step reads."""
        return sum(w.numel() for w in self.tensors())

    def weight_bytes(self):
        """Bytes of every weight tensor the step reads, as allocated."""
        return sum(w.numel() * w.element_size() for w in self.tensors())

    def kv_bytes(self):
        """Bytes of the K and V caches, as allocated."""
        return 2 * self.k_cache.numel() * self.k_cache.element_size()

    # ------------------------------------------------------------------ the arithmetic

    def _rope(self, positions):
        torch, d = self.torch, self.model.head_dim
        inv = 1.0 / ROPE_THETA ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
        angles = positions[:, None] * inv[None, :]  # (positions, d/2)
        return angles.cos().to(self.device), angles.sin().to(self.device)

    def _rotate(self, x, cos, sin):
        # rotate-half rotary embedding (Llama's) in float32: x is (..., positions, head_dim)
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half].float(), x[..., half:].float()
        return self.torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)

    def _norm(self, x, w):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS)).to(x.dtype) * w

    def _attend(self, q, k, v, causal):
        """q (B, H, S, d), k and v (B, KV, T, d) -> (B, S, H*d): each KV head serves its group of query heads
        without being copied; ``causal`` masks position s from the keys after T - S + s."""
        torch, m = self.torch, self.model
        b, _, s, d = q.shape
        g = m.num_heads // m.num_kv_heads
        qg = q.reshape(b, m.num_kv_heads, g * s, d)
        scores = torch.matmul(qg, k.transpose(-1, -2)).float() / math.sqrt(d)  # (B, KV, g*S, T)
        if causal:
            t = k.shape[2]
            rows = torch.arange(s, device=q.device).repeat(g)[:, None] + (t - s)
            scores = scores.masked_fill(torch.arange(t, device=q.device)[None, :] > rows, float("-inf"))
        out = torch.matmul(scores.softmax(-1).to(v.dtype), v)  # (B, KV, g*S, d)
        return out.reshape(b, m.num_heads, s, d).transpose(1, 2).reshape(b, s, m.num_heads * d)

    def _layer(self, x, layer, k_all, v_all, cos, sin, write_at):
        """One layer on x (B, S, hidden). ``k_all``/``v_all`` hold this layer's keys and values; the S new ones
        are written at positions ``write_at`` onwards and the queries attend to all of k_all up to them."""
        m = self.model
        b, s, _ = x.shape
        a = self._norm(x, layer["attn_norm"])
        q = (a @ layer["wq"].T).view(b, s, m.num_heads, m.head_dim).transpose(1, 2)
        k = (a @ layer["wk"].T).view(b, s, m.num_kv_heads, m.head_dim).transpose(1, 2)
        v = (a @ layer["wv"].T).view(b, s, m.num_kv_heads, m.head_dim).transpose(1, 2)
        if m.qk_norm:
            q, k = self._norm(q, layer["q_norm"]), self._norm(k, layer["k_norm"])
        q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
        k_all[:, :, write_at:write_at + s] = k
        v_all[:, :, write_at:write_at + s] = v
        end = write_at + s
        x = x + self._attend(q, k_all[:, :, :end], v_all[:, :, :end], causal=s > 1) @ layer["wo"].T
        a = self._norm(x, layer["mlp_norm"])
        gate = self.torch.nn.functional.silu(a @ layer["w_gate"].T)
        return x + (gate * (a @ layer["w_up"].T)) @ layer["w_down"].T

    def _logits(self, x):
        return self._norm(x, self.final_norm) @ self.lm_head.T

    def step(self):
        """One decode step: the logits (batch, vocab) of the next token of each sequence."""
        x = self.embed[self.tokens][:, None, :]
        for i, layer in enumerate(self.layers):
            x = self._layer(x, layer, self.k_cache[i], self.v_cache[i], self.cos, self.sin, self.context - 1)
        return self._logits(x[:, -1])

    def forward(self, tokens):
        """The whole sequences ``tokens`` (batch, S) from position 0 with a causal mask, written into the cache's
        first S positions (a prefill, done the plain way): the logits (batch, S, vocab). For checking ``step``."""
        torch = self.torch
        s = tokens.shape[1]
        if s > self.context:
            raise ValueError(f"forward takes at most context = {self.context} positions, got {s}")
        cos, sin = self._rope(torch.arange(s, dtype=torch.float32))
        x = self.embed[tokens.to(self.device)]
        for i, layer in enumerate(self.layers):
            x = self._layer(x, layer, self.k_cache[i], self.v_cache[i], cos, sin, 0)
        return self._logits(x)


def measure_decode(model, *, repeats=11, graph=True):
    """Seconds per decode step of ``model`` (a ``DecodeModel``): {"eager": Timing, "graph": Timing} (the graph on
    CUDA only, where ``graph``), and {what was skipped: why}. No cache flush: the weights are read once per step
    and are far larger than any cache for the models measured on a GPU."""
    torch, device = model.torch, model.device
    timer = _timer(torch, device)
    out, skipped = {}, {}
    with torch.inference_mode():
        out["eager"] = time_on_device(model.step, timer, repeats=repeats, warmup=3)
        if not graph:
            return out, skipped
        if not device.startswith("cuda"):
            skipped["decode as a CUDA graph"] = "CUDA graphs need a CUDA device"
            return out, skipped
        try:
            g = torch.cuda.CUDAGraph()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                model.step()  # warm-up on a side stream, as capture requires
            torch.cuda.current_stream().wait_stream(stream)
            with torch.cuda.graph(g):
                model.step()
            out["graph"] = time_on_device(g.replay, timer, repeats=repeats, warmup=3)
        except RuntimeError as exc:
            skipped["decode as a CUDA graph"] = f"RuntimeError: {str(exc).splitlines()[0][:120]}"
    return out, skipped


__all__ = ["DecodeModel", "TORCH_DTYPES", "measure_decode"]
