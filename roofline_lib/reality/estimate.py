"""A best estimate of a published measurement, beside its lower bound: the same work, with each cost a real
engine pays named as a term.

    >>> import roofline_lib as rl
    >>> record = rl.measurements.published_measurements()[0]
    >>> c = rl.measurements.compare(record)     # the record beside its bound, and its best estimate
    >>> terms = c.estimate_terms                # Terms(kernels=..., dequant=..., boundaries=..., ...)
    >>> terms.total == c.estimate_s             # seconds, the sum of the terms
    True

The lower bound (``records.compare``) runs every byte at the datasheet bandwidth and every FLOP at the datasheet
peak, with compute and memory overlapped over the whole step. The estimate adds, term by term:

- ``kernels``: each kernel (part of the step) at its own max(math, memory) time, at the chip's *achieved*
  ceilings (``records.calibrated``: published matmul and copy benchmarks), not the step's overlapped sum;
- ``dequant``: weight-only int8/int4 matmuls read their packed weights at a share of that bandwidth that
  depends on the kernel (``KERNEL_CLASSES``): a fused Marlin-style kernel keeps close to the ideal, PyTorch's
  tinygemm and torch.compile's int8 mixed matmul lose more;
- ``boundaries``: every kernel boundary costs device time (launch gap, ramp-up, the last wave's stragglers):
  ``KERNEL_BOUNDARY_S`` per kernel of the fused step, once per forward pass;
- ``allreduce``: tensor parallelism's two all-reduces per layer, each the engine's small-message latency plus
  the ring's bytes at NCCL's own share of the per-direction link (``multichip.collectives.nccl_link_share``);
- ``host``: an engine's per-step host work (scheduling, sampling, streaming) where it does not overlap;
- ``request``: a server's per-request cost before the first token (queue, tokenising, the HTTP round trip).

Constants marked *fitted* were fitted once (``python -m roofline_lib.reality.fit``) on the records named in
``FITTED_ON`` only; every other record is held out, and the chapter reports the two errors apart. The form of
the terms was chosen looking at all the records, so "held out" means held out from the fitted values only.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..llm.parts import Sharding
from ..measure.launch import GRAPH_BOUNDARY_S
from ..multichip import collectives
from ..roofline.bounds import estimate as roofline_estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .ceilings import calibrated

# What a kernel boundary costs the device with CUDA graphs: 5 us (measure.launch, where it is sourced).
KERNEL_BOUNDARY_S = GRAPH_BOUNDARY_S
# The share of the datasheet fp8 peak at which the estimate runs fp8 matmuls (fitted). Not a kernel's measured
# efficiency (no fp8 GEMM benchmark is behind it): a residual, the one knob the fit has for the fp8 records (all
# TensorRT-LLM and MLPerf on H100/H200), so it absorbs whatever those runs spend that no other term names:
# the fp8 GEMMs' own shortfall, quantise and scale kernels, attention, scheduling.
FP8_RESIDUAL_SHARE = 0.45


@dataclasses.dataclass(frozen=True)
class KernelClass:
    """A weight-only matmul kernel: the share of achieved bandwidth at which it reads its packed weights."""

    name: str
    weight_read_share: float
    source: str


KERNEL_CLASSES = {
    "native": KernelClass("native (bf16/fp16/fp8 tensor cores)", 1.0, "no unpacking: the weights are the operand"),
    "marlin": KernelClass("Marlin-style fused dequantisation", 1.0,
                          "IST-DASLab/marlin README: 'close to ideal (4x) speedups up to batchsizes of 16-32 tokens'"),
    "tinygemm": KernelClass("tinygemm int4 (torch.ops.aten._weight_int4pack_mm)", 0.50,
                            "fitted on gpt-fast int4 records (FITTED_ON)"),
    "int8-mixed-mm": KernelClass("torch.compile int8 weight-only mixed matmul", 0.80,
                                 "fitted on gpt-fast int8 records (FITTED_ON)"),
}


@dataclasses.dataclass(frozen=True)
class Engine:
    """The costs an inference engine adds beyond its kernels, with where each figure comes from."""

    name: str
    allreduce_latency_s: float  # one small-message all-reduce of tensor parallelism
    host_step_s: float  # host work per forward pass that the device waits for
    request_s: float  # per request before its first token (servers only)
    int8_kernel: str
    int4_kernel: str
    source: str


ENGINES = {
    "gpt-fast": Engine("gpt-fast / torch.compile", 19e-6, 0.0, 0.0, "int8-mixed-mm", "tinygemm",
                       "all-reduce: PyTorch IntraNodeComm on an A100 hybrid cube mesh (ENABLE_INTRA_NODE_COMM=1), "
                       "fitted (pytorch#131739 reports 'around 17us' for it); CUDA graphs "
                       "(mode='reduce-overhead'), so no host cost per step"),
    "TensorRT-LLM": Engine("TensorRT-LLM", 6e-6, 0.0, 0.0, "native", "marlin",
                           "all-reduce: TensorRT-LLM's one-shot custom kernel for small messages: sglang PR #2904 "
                           "measured 5.7-5.9 us for the TensorRT-LLM-derived kernel on 8 x H100"),
    "TensorRT-LLM server": Engine("TensorRT-LLM behind a server (Triton, trtllm-serve)", 6e-6, 1.2e-3, 9e-3,
                                  "native", "marlin", "host step and request costs fitted (FITTED_ON)"),
    "other": Engine("an engine not described here (vLLM, SGLang ...)", 10e-6, 0.0, 0.0, "native", "marlin",
                    "all-reduce: vLLM's custom kernel, 9.3-10.1 us on 8 x H100 (sglang PR #2904)"),
}


def engine_for(system):
    """The ``Engine`` of a record's ``system`` text."""
    text = str(system).lower()
    if "gpt-fast" in text or "torchao" in text:
        return ENGINES["gpt-fast"]
    if "tensorrt-llm" in text and ("triton" in text or "serve" in text):
        return ENGINES["TensorRT-LLM server"]
    if "tensorrt-llm" in text:
        return ENGINES["TensorRT-LLM"]
    return ENGINES["other"]


def kernel_class(record, engine):
    """The ``KernelClass`` that reads the record's weights (by its format, quant scheme and engine)."""
    scheme = record.quant_scheme.lower()
    if "marlin" in scheme or "machete" in scheme:
        return KERNEL_CLASSES["marlin"]
    if record.weight_dtype == "int4":
        return KERNEL_CLASSES[engine.int4_kernel]
    if record.weight_dtype == "int8":
        return KERNEL_CLASSES[engine.int8_kernel]
    return KERNEL_CLASSES["native"]


TERM_NAMES = ("kernels", "dequant", "boundaries", "allreduce", "host", "request")


@dataclasses.dataclass(frozen=True)
class Terms:
    """Seconds of each cost in a record's unit of work (per replica); ``total`` is their sum."""

    kernels: float
    dequant: float
    boundaries: float
    allreduce: float
    host: float
    request: float
    engine: str
    kernel_class: str

    @property
    def total(self):
        """The estimate, seconds: the sum of the terms."""
        return sum(getattr(self, n) for n in TERM_NAMES)

    def shares(self):
        """Each term's share of ``total``."""
        return {n: getattr(self, n) / self.total for n in TERM_NAMES}


def _per_chip(work, chip, n, kv_ways, weight_share):
    """(kernel time, extra time of slow weight reads) of one chip's share of ``work``, summed over its parts
    (and over the steps of an array of contexts), each part at its own max(math, memory)."""
    leaves = work.leaves()
    times = [roofline_estimate(p, chip) for p in leaves]
    shape = np.broadcast_shapes(*[np.shape(e.t_mem) for e in times])
    kernels = extra = 0.0
    for p, e in zip(leaves, times, strict=True):
        sharding = p.kind.sharding
        if sharding is Sharding.REPLICATED:
            math_share = mem_share = 1.0
        elif sharding is Sharding.BY_KV_HEAD:
            math_share, mem_share = 1 / n, 1 / kv_ways
        else:
            math_share = mem_share = 1 / n
        t_math = np.broadcast_to(e.t_math, shape) * math_share
        t_mem = np.broadcast_to(e.t_mem, shape) * mem_share
        fast = np.maximum(t_math, t_mem)
        kernels += float(np.sum(fast))
        if weight_share < 1 and p.kind.kernel and sharding in (Sharding.SPLIT, Sharding.EXPERTS) \
                and p.kind.category != "KV cache":
            extra += float(np.sum(np.maximum(t_math, t_mem / weight_share) - fast))
    return kernels, extra


def kernels_per_forward(model):
    """Kernels of one forward pass once a compiler has fused the elementwise parts into their neighbours:
    the parts a fusing compiler keeps (``PartKind.kernel``), per layer, plus the once-per-step ones.

    Taught in chapter 10 (notebooks/10_reality_check.ipynb); also used in chapter 11."""
    from ..llm.steps import decode_step

    m = get_model(model)
    return sum(m.num_layers if p.kind.per_layer else 1 for p in decode_step(m, 1, 1).leaves() if p.kind.kernel)


def estimate_terms(record, steps, batch):
    """``Terms`` of ``record``'s unit of work, from the workloads ``steps`` ((workload, weight) pairs, as
    ``records._steps`` builds them) at ``batch`` sequences per replica."""
    chip = get_accelerator(record.chip)
    achieved = calibrated(chip)
    if "fp8" in chip.peak_flops_by_dtype:
        peaks = dict(achieved.peak_flops_by_dtype, fp8=chip.peak_flops_by_dtype["fp8"] * FP8_RESIDUAL_SHARE)
        achieved = dataclasses.replace(achieved, peak_flops_by_dtype=peaks)
    m = get_model(record.model)
    n = record.replica_chips
    engine = engine_for(record.system)
    kclass = kernel_class(record, engine)
    # data-parallel attention (expert parallel): each chip holds its own sequences' KV; tensor parallel splits heads
    kv_ways = n if "expert" in record.parallelism else 1 if m.mla else min(n, m.num_kv_heads)
    kernels = dequant = 0.0
    for work, weight in steps:
        k, d = _per_chip(work, achieved, n, kv_ways, kclass.weight_read_share)
        kernels += weight * k
        dequant += weight * d
    counts = cost_counts(record)
    boundaries = counts.passes * kernels_per_forward(m) * KERNEL_BOUNDARY_S
    allreduce = counts.allreduces * engine.allreduce_latency_s
    # expert parallel with data-parallel attention has no tensor-parallel all-reduce: its all-to-alls are
    # multichip.expert_serving's to bound, not a term here
    if n > 1 and "expert" not in record.parallelism:
        key = "nvlink" if chip.interconnect_bandwidth else "pcie"
        link = collectives.nccl_link_share(chip, key) * collectives.link_bandwidth(chip, key)
        allreduce += sum(weight * _allreduce_bytes_seconds(work_tokens, m, n, link)
                         for work_tokens, weight in _tokens_per_pass(record, batch))
    host = counts.passes * engine.host_step_s
    request = counts.requests * engine.request_s
    return Terms(kernels, dequant, boundaries, allreduce, host, request, engine.name, kclass.name)


@dataclasses.dataclass(frozen=True)
class Counts:
    """How many times a record's unit of work pays each per-event cost of its ``Engine``."""

    allreduces: float  # small all-reduces (2 per layer per forward pass, on more than one chip)
    passes: int  # forward passes (host work per step)
    requests: int  # requests whose first token the record times (1 for a prefill or request record)


def cost_counts(record):
    """``Counts`` of ``record``'s unit of work: each engine cost times its count is that term's latency part."""
    m = get_model(record.model)
    passes = sum(weight for _, weight in _tokens_per_pass(record, 1))
    tensor_parallel = record.replica_chips > 1 and "expert" not in record.parallelism
    allreduces = 2 * m.num_layers * passes if tensor_parallel else 0.0
    return Counts(allreduces, _forward_passes(record), int(record.measures in ("prefill", "request")))


def _forward_passes(record):
    """Forward passes in the record's unit of work: one per decode step or prefill."""
    if record.measures in ("prefill", "prefill_throughput", "decode_step") or record.output_len is None:
        return 1
    return record.output_len if record.phase == "decode" else 1 + record.output_len


def _tokens_per_pass(record, batch):
    """(tokens in one forward pass, how many such passes) of the record's unit of work."""
    if record.measures in ("prefill", "prefill_throughput"):
        return [(batch * record.prompt_len, 1)]
    if record.measures == "decode_step" or record.output_len is None:
        return [(batch, 1)]
    if record.phase == "decode":  # a decode pool of a disaggregated deployment: its prompts were prefilled elsewhere
        return [(batch, record.output_len)]
    return [(batch * record.prompt_len, 1), (batch, record.output_len)]


def _allreduce_bytes_seconds(tokens, m, n, link):
    """The bytes part of two all-reduces per layer of [tokens, hidden] bf16 activations: the ring's bytes at
    ``link`` (byte/s, NCCL's figure for the link); the engine's latency is counted by ``cost_counts``."""
    message = tokens * m.hidden_size * 2
    return 2 * m.num_layers * collectives.ring_allreduce_bytes_unchecked(message, n) / link


# Records the fitted constants above were fitted on (benchmarks/fit_estimate.py); all others are held out.
FITTED_ON = (
    "gpt-fast-llama-2-70b-bf16-a100-tp2",
    "gpt-fast-llama-2-70b-bf16-a100-tp8",
    "gpt-fast-llama-2-70b-int4-a100",
    "gpt-fast-llama-2-7b-bf16-a100-tp4",
    "gpt-fast-llama-2-7b-int4-a100",
    "gpt-fast-mixtral-8x7b-bf16-a100-tp2",
    "gpt-fast-mixtral-8x7b-bf16-a100-tp8",
    "gpt-fast-mixtral-8x7b-int8-a100-tp4",
    "mlperf41-hpe-xd670-h100x8-llama2-70b-offline",
    "mlperf41-nvidia-h100x8-llama2-70b-99.9-offline",
    "mlperf41-nvidia-h200x8-llama2-70b-offline",
    "mlperf41-nvidia-h200x8-llama2-70b-server",
    "mlperf41-nvidia-h200x8-llama2-70b-server-tpot",
    "torchao-llama-2-7b-bf16-a100",
    "torchao-llama-2-7b-int8-a100",
    "trtllm-h200blog-llama-2-70b-fp8-h200-b512-128-128",
    "trtllm-v014-serve-llama-3.1-70b-h200-tp4-itl",
    "trtllm-v014-serve-llama-3.1-8b-h200-itl",
    "trtllm-v014-serve-llama-3.1-8b-h200-ttft",
    "trtllm-v017-llama-3.1-70b-fp16-a100-tp4-128-128",
    "trtllm-v017-llama-3.1-70b-fp8-h200-tp1-128-128",
    "trtllm-v017-llama-3.1-8b-fp16-a100-128-128",
    "trtllm-v017-llama-3.1-8b-fp8-h100-2048-128",
    "trtllm-v017-mixtral-8x7b-fp8-h100-tp2-128-128",
    "trtllm-v017-mixtral-8x7b-fp8-h200-tp1-128-2048",
    "trtllm-v05-llama-2-70b-fp8-h100-tp4-ttft-2048",
    "trtllm-v05-llama-2-7b-fp8-h100-ttft-2048",
    "trtllm-v061-llama-2-70b-fp8-h100-tp4-b480-128-2048",
    "trtllm-v061-llama-2-7b-fp8-h100-b768-128-128",
)

__all__ = ["cost_counts", "Counts", "ENGINES", "Engine", "engine_for", "estimate_terms", "FITTED_ON",
           "FP8_RESIDUAL_SHARE", "KERNEL_BOUNDARY_S",
           "KERNEL_CLASSES", "kernel_class", "KernelClass", "kernels_per_forward", "TERM_NAMES",
           "Terms"]
