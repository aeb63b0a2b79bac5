"""Chapter 10: predictions against published measurements."""

from .. import measurements
from ..hardware import get_accelerator
from ..models import get_model
from .core import Question


def _measured_tokens_per_s(record_id):
    """The held-out record's published figure, as tokens/s of one sequence."""
    rec = next(r for r in measurements.published_measurements() if r.id == record_id)
    return 1 / rec.measured_seconds()


def _impossible():
    # reading every weight once per token, 20 tokens, at the datasheet bandwidth
    t_min = 20 * get_model("llama-2-13b").weight_bytes("fp16") / get_accelerator("A100").mem_bandwidth
    return "impossible" if t_min > 142.5e-3 else "possible"


QUESTIONS = [
    Question("10.holdout_tp4", "gpt-fast, Llama-2-70B bf16, batch 1, tensor parallel on 4 A100 80GB (held out): "
             "predict its tokens/s from the calibrated bound and the per-all-reduce cost of the other "
             "tensor-parallel records.",
             lambda: _measured_tokens_per_s("gpt-fast-llama-2-70b-bf16-a100-tp4"), rtol=0.10, unit="tok/s",
             hint="calibrated bound of the 4-GPU step, plus 2 all-reduces per layer at the median cost of section 4c."),
    Question("10.holdout_int4", "torchao, Llama-3-8B with int4 weights, batch 1, one A100 (held out): predict its "
             "tokens/s from the lower bound and the MBU the other int4 records reach.",
             lambda: _measured_tokens_per_s("torchao-llama-3-8b-int4-a100"), rtol=0.10, unit="tok/s",
             hint="at batch 1 the bound is memory time; a run at MBU u takes bound / u."),
    Question("10.impossible", "Llama-2-13B fp16, batch 1, one A100 80GB SXM4: 20 tokens in 142.5 ms. Possible or "
             "impossible?", _impossible, kind="choice", choices=("possible", "impossible"),
             hint="every token reads every weight once: 20 x weight bytes / bandwidth is the least time."),
]
