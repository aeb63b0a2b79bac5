"""Serving whole requests: the closed-form sums over a generation's decode steps (``decode_sums``),
TTFT, TPOT, throughput and cost, continuous batching and SLOs (``requests``), and the serving techniques as
arithmetic (``techniques``: paged KV, chunked prefill, prefix caching, disaggregation; ``speculative``: speculative
decoding), and the wait before a prefill as the arrival rate rises (``queueing``).
"""

from . import queueing
from .decode_sums import decode_lines, decode_time, sum_max_affine, weight_bytes_read
from .requests import (
    ContinuousBatching,
    RequestEstimate,
    batch_for_rate,
    best_batch_under_slo,
    capacity,
    continuous,
    cost_per_million,
    request,
)
from .speculative import Speculative, expected_tokens_per_verify, speculative
from .techniques import (
    DEFAULT_PAGE_TOKENS,
    BatchingComparison,
    Disaggregated,
    KVFit,
    MixedStep,
    PrefixCache,
    chunked_prefill,
    disaggregated,
    kv_fit,
    prefix_cache,
    static_vs_continuous,
)

__all__ = [
    "batch_for_rate", "BatchingComparison", "queueing", "best_batch_under_slo", "capacity", "chunked_prefill",
    "continuous", "ContinuousBatching", "cost_per_million", "decode_lines", "decode_time", "DEFAULT_PAGE_TOKENS",
    "Disaggregated", "disaggregated", "expected_tokens_per_verify", "kv_fit", "KVFit", "MixedStep", "prefix_cache",
    "PrefixCache", "request", "RequestEstimate", "Speculative", "speculative", "static_vs_continuous",
    "sum_max_affine", "weight_bytes_read"
]
