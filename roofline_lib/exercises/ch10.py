"""Chapter 10: predictions against published measurements."""

import statistics

from ..llm.steps import decode_step
from ..reality import records as measurements
from ..roofline.bounds import estimate
from ..specs.hardware import get_accelerator
from ..specs.models import get_model
from .core import Question

HELD_OUT_TP4 = "gpt-fast-llama-2-70b-bf16-a100-tp4"


def _measured_tokens_per_s(record_id):
    """The held-out record's published figure, as tokens/s of one sequence."""
    rec = next(r for r in measurements.published_measurements() if r.id == record_id)
    return 1 / rec.measured_seconds()


def _impossible():
    # reading every weight once per token (all but the embedding table, of which a step reads one row), 20 tokens,
    # at the datasheet bandwidth
    m = get_model("llama-2-13b")
    t_min = 20 * 2 * (m.n_params - m.vocab_size * m.hidden_size) / get_accelerator("A100").mem_bandwidth
    return "impossible" if t_min > 142.5e-3 else "possible"


def _calibrated_13b_ms():
    return estimate(decode_step("llama-2-13b", 1, 1024), measurements.calibrated("A100")).lower * 1e3


def _fewest_a100s_for_30_tokens():
    """Calibrated bound plus the tensor-parallel overhead per layer (the median residue the other gpt-fast
    tensor-parallel Llama records leave, chapter 10, section 4c): the fewest of 2, 4, 8 A100s at 30 tokens/s or
    more."""
    records = [c for c in measurements.measured_vs_predicted() if c.record.system == "gpt-fast"
               and c.record.batch == 1 and c.record.weight_dtype == "bf16" and c.record.replica_chips > 1]
    fitted = [(c.measured_s - c.calibrated_s) / get_model(c.record.model).num_layers for c in records
              if c.record.model.startswith("Llama") and c.id != HELD_OUT_TP4]
    per_layer = statistics.median(fitted)
    layers = get_model("llama-2-70b").num_layers
    by_chips = {c.record.replica_chips: c.calibrated_s + layers * per_layer for c in records
                if c.record.model == "Llama-2-70B"}
    return next((str(n) for n in (2, 4, 8) if by_chips[n] <= 1 / 30), "more than 8")


QUESTIONS = [
    Question("10.holdout_tp4", "gpt-fast, Llama-2-70B bf16, batch 1, tensor parallel on 4 A100 80GB (held out): "
             "predict its tokens/s from the calibrated bound and the tensor-parallel overhead per layer that the "
             "other tensor-parallel records leave (section 4c's median).",
             lambda: _measured_tokens_per_s("gpt-fast-llama-2-70b-bf16-a100-tp4"), rtol=0.10, unit="tok/s",
             hints=(
                 "calibrated bound of the 4-GPU step, plus section 4c's median tensor-parallel overhead for "
                 "every layer.",
                 "1 / (rec.calibrated_s + num_layers x tp_overhead_s): rec the held-out record, tp_overhead_s "
                 "section 4c's median per layer.")),
    Question("10.holdout_int4", "torchao, Llama-3-8B with int4 weights, batch 1, one A100 (held out): predict its "
             "tokens/s from the lower bound and the MBU the other int4 records reach.",
             lambda: _measured_tokens_per_s("torchao-llama-3-8b-int4-a100"), rtol=0.10, unit="tok/s",
             hints=("at batch 1 the bound is memory time; a run at MBU u takes bound / u.",
                    "u = the median MBU of groups['batch-1 decode, int4 weights, one chip']; tokens/s = "
                    "u / rec.predicted_lower_s.")),
    Question("10.impossible", "Llama-2-13B fp16, batch 1, one A100 80GB SXM4, no speculative decoding: 20 tokens in "
             "142.5 ms. Possible or impossible?", _impossible, kind="choice", choices=("possible", "impossible"),
             hints=("what must each generated token read at least, and how fast can the A100 read it?",
                    "every token reads every weight once but the embedding table (one row of it): 20 x 2 x (n_params "
                    "- vocab_size x hidden_size) / the A100's mem_bandwidth is the least time.")),
    Question("10.predict_calibrated_13b", "Predict, then check: the calibrated time per token (ms) of Llama-2-13B, "
             "bf16, batch 1, context 1,024 on one A100 80GB SXM4 (achieved ceilings instead of the datasheet's). "
             "Within 5 % counts.", _calibrated_13b_ms, rtol=0.05, unit="ms",
             hints=("the weights (26 GB) and a small KV cache, read at the achieved 1.6 TB/s",
                    "(2 x (13,015,864,320 - 32,000 x 5,120) + kv_cache_bytes(1, 1024)) / 1.6e12 s, x 1e3 for ms")),
    Question("10.design_a100s_30_tokens", "Design: gpt-fast-style decoding of Llama-2-70B, bf16, batch 1, on A100 "
             "80GB in tensor parallel must reach 30 tokens/s. With the calibrated bound plus section 4c's "
             "tensor-parallel overhead per layer, the fewest GPUs: '2', '4', '8' or 'more than 8'?",
             _fewest_a100s_for_30_tokens, kind="choice", choices=("2", "4", "8", "more than 8"),
             hints=("30 tokens/s allows 1/30 s per token: on how many chips do the calibrated step and its "
                    "tensor-parallel overhead fit?",
                    "for n = 2, 4, 8: the gpt-fast Llama-2-70B record's calibrated_s + 80 x tp_overhead_s <= 1 / 30"),
             why={"2": "2 GPUs: a calibrated 43 ms plus 80 layers of ~58 us overhead is about 48 ms: 21 tokens/s.",
                       "8": "8 GPUs get there, but fewer do too: try 4 (a calibrated 21.5 ms plus 4.7 ms).",
                       "more than 8": "8 GPUs give about 15 ms per token: count fewer."}),
    Question("10.explain_server_tpot", "Explain: MLPerf's Server record of Llama-2-70B on H200s reports a time per "
             "output token 8.6x the batch-1 bound, under MLPerf's limit of 200 ms per output token (p99). The most "
             "likely reason: 'batch' (in-flight batching decodes many sequences per step), 'fp8' (the run's fp8 "
             "precision), 'network' (the load generator's network) or 'bound wrong'?", lambda: "batch",
             kind="choice", choices=("batch", "fp8", "network", "bound wrong"),
             hints=("what does the batch-1 bound assume about each step that a loaded server does not do?",
                    "at batch b a step reads the weights once plus b KV caches and does b x the FLOPs: compare its "
                    "time with batch 1's"),
             why={"fp8": "fp8 weights read half the bytes of bf16: they make a step faster, not slower.",
                       "network": "the time per output token is measured between tokens of one stream, inside the "
                                  "server: the network adds to the first token, not to each step.",
                       "bound wrong": "a bound below the measurement is what a bound must be; 8.6x says the step did "
                                      "more work than batch 1."}),
    Question("10.mistake_int4_mbu", "Find the mistake: 'torchao's int4 Llama-3-8B at batch 1 on an A100: the lower "
             "bound is 1.85 ms; bf16 decoders reach an MBU of 0.7; so expect 0.7 / 1.85 ms = 380 tokens/s.' What is "
             "wrong: 'int4 mbu' (int4 kernels reach a far lower MBU), 'bound' (the bound should count bf16 bytes), "
             "'inverted' (tokens/s is bound / MBU) or 'nothing'?", lambda: "int4 mbu", kind="choice",
             choices=("int4 mbu", "bound", "inverted", "nothing"),
             hints=("check the three parts of the claim: the bound, the MBU, and how they combine",
                    "compare 0.7 with the MBU of groups['batch-1 decode, int4 weights, one chip'] in section 3"),
             why={"bound": "the int4 weights are what the kernel reads: the bound counts 4-bit bytes, rightly.",
                       "inverted": "a run at MBU u takes bound / u seconds per token: u / bound tokens/s is right.",
                       "nothing": "compare the MBU of the int4 records in section 3 with the bf16 ones."}),
]


__all__ = ["HELD_OUT_TP4", "QUESTIONS"]
