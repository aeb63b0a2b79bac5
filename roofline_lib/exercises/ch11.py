"""Chapter 11: serving whole requests. Model shapes come from data/models, never typed here."""

from .. import serving
from ..core.units import SECONDS_PER_HOUR
from .core import Question

# Prices per chip-hour for the design question: hypothetical figures the question states (use your provider's).
PRICES = {"a100": 1.80, "h100": 2.50, "h200": 3.50}  # A100 80GB SXM4, H100 SXM5, H200 SXM


def _littles_law():
    # 48 sequences in flight, 200 output tokens each at 20 ms per token: rate = N / (O x TPOT)
    return 48 / (200 * 20e-3)


def _slo_chip():
    # 25 ms binds on all three chips; at 50 ms the H100 and H200 would stop at the sequences that fit instead
    cost = {chip: serving.best_batch_under_slo("llama-2-13b", chip, 1024, 256, 25e-3).cost_per_million_tokens(price)
            for chip, price in PRICES.items()}
    return min(cost, key=cost.get)


def _price_slip():
    # the colleague divided a price per HOUR by tokens per SECOND; the answer keeps the prompt's 827 tokens/s
    # (the bound, rounded: tests check it), so the mistake is the only thing to find
    return 2.50 * 1e6 / (827 * SECONDS_PER_HOUR)


def _spec_pays():
    s = serving.speculative("llama-2-7b", "A100", batch=128, context=512, k=4, acceptance=0.6)
    return "pays" if s.speedup > 1 else "does not pay"


QUESTIONS = [
    Question("11.littles_law", "A server keeps 48 sequences decoding; each request has 200 output tokens at a TPOT "
             "of 20 ms. What arrival rate (requests per second) keeps it there?", _littles_law, unit="requests/s",
             hints=("Little's law: in flight = arrival rate x time each spends decoding",
                    "a request decodes for output tokens x TPOT seconds: rate = 48 / (200 x 20e-3 s)")),
    Question("11.spec_tokens", "Speculative decoding with k = 3 drafted tokens, each accepted with probability 0.6: "
             "expected tokens per verify step.", lambda: serving.expected_tokens_per_verify(0.6, 3),
             rtol=1e-6, unit="tokens",
             hints=("the accepted drafts, plus the one token the target always adds",
                    "draft i counts only if drafts 1 .. i are all accepted: sum of 0.6^i for i = 0 .. k, "
                    "or rl.serving.expected_tokens_per_verify")),
    Question("11.paged_batch", "Llama-2-7B bf16 on one H100 SXM (the driver's bytes): requests end at 300, 900 or "
             "1500 positions, equally often; pages of 16 tokens. How many sequences' KV caches fit beside the "
             "weights?", lambda: serving.kv_fit("llama-2-7b", "H100 SXM", [300, 900, 1500], 4096).paged_batch,
             rtol=0, unit="sequences", rounding="down",
             hints=("mean positions per sequence in whole pages, times bytes per position",
                    "(driver's bytes minus bf16 weights) / (mean of ceil(L / 16) x 16 positions x KV bytes per "
                    "position), rounded down")),
    Question("11.spec_pays", "Predict: Llama-2-7B bf16 on an A100 80GB, batch 128 at context 512: speculative "
             "decoding with k = 4 and acceptance 0.6 (a draft that costs nothing). Does it 'pays' or 'does not pay'?",
             _spec_pays, kind="choice", choices=("pays", "does not pay"),
             hints=("what does each step read besides the weights at this batch and context, and is the verify step "
                    "of 5 positions per sequence much slower than a plain step?",
                    "rl.serving.speculative('llama-2-7b', 'A100', 128, 512, 4, 0.6).speedup = t_plain x tokens per "
                    "verify / t_verify; > 1 pays"),
             why={"does not pay": "at context 512 each step reads 34 GB of KV cache besides 13.5 GB of weights "
                                       "(about 24 ms at 2.04 TB/s), and the verify step's 5 x 128 tokens need about "
                                       "28 ms of compute: barely more than a plain step, for about 2.3 tokens per "
                                       "sequence. The table's batch 256 was at context 128, where the weights are "
                                       "most of the bytes."}),
    Question("11.slo_chip", "Design: Llama-2-13B bf16, 1024 prompt and 256 output tokens, a lower-bound TPOT of at "
             "most 25 ms under continuous batching: which chip serves a million output tokens cheapest at "
             "$1.80 (A100 80GB SXM4), $2.50 (H100 SXM5) and $3.50 (H200 SXM) per hour: 'a100', 'h100' or 'h200'?",
             _slo_chip, kind="choice",
             choices=tuple(PRICES),
             hints=("the largest batch that meets the SLO on each chip, then price / throughput",
                    "rl.serving.best_batch_under_slo('llama-2-13b', chip, 1024, 256, 25e-3).cost_per_million_tokens("
                    "price) for each chip"),
             why={"a100": "the A100's smaller memory and bandwidth hold a much smaller batch within 25 ms: its "
                               "lower price does not make up for the fewer tokens per hour.",
                       "h100": "the H100 has the H200's compute but less memory and bandwidth: the H200 holds a larger "
                               "batch within the SLO, enough to outweigh its higher price per hour."}),
    Question("11.price_slip", "Find the mistake: 'Llama-2-13B bf16 on one H100 SXM5, batch 8, 512-token prompts and "
             "128 output tokens, makes 827 output tokens/s (its bound), so at 2.50 per chip-hour a million output "
             "tokens cost 2.50 x 1e6 / 827 = 3,022.' What do a million output tokens really cost, in the same "
             "currency?", _price_slip, unit="per million tokens",
             hints=("in what unit of time is the price, and in what unit is the throughput?",
                    "tokens per hour = 3600 x tokens per second; cost = price per hour x 1e6 / tokens per hour")),
]


__all__ = ["PRICES", "QUESTIONS"]
