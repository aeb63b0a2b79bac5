"""Chapter 11's questions (serving whole requests) against hand computations: Little's law, the expected tokens of
a speculative verify step, and paged KV on an H100 SXM5 (81,559 MiB as nvidia-smi reports it)."""

import math

from exercise_hand import chapter_tests

import roofline_lib as rl
from roofline_lib import serving

# Llama-2-7B bf16 on one H100 SXM: the driver's bytes less 2 bytes per parameter; 2 x 32 layers x 4,096 x 2 bytes
# per position; requests of 300, 900 and 1,500 positions in pages of 16: 304, 912, 1,504, mean 906.67 positions
FREE = 81_559 * 2**20 - 2 * 6_738_415_616
PER_POSITION = 2 * 32 * 4096 * 2
MEAN_PAGED = (304 + 912 + 1504) / 3

HAND = {
    "11.littles_law": 48 / (200 * 20e-3),            # in flight / time in flight: 12 requests/s
    "11.spec_tokens": 1 + 0.6 + 0.6**2 + 0.6**3,     # the target's own token, plus each draft accepted in a row
    "11.paged_batch": math.floor(FREE / (MEAN_PAGED * PER_POSITION)),   # 151
    "11.spec_pays": "pays",                          # test_spec_pays_by_hand: x1.95 by hand
    "11.slo_chip": "h200",
    "11.price_slip": 2.50 * 1e6 / (827 * 3600),     # price per hour over tokens per HOUR: 0.8397 per million
}


test_hand_values, test_every_question_has_a_hand_value = chapter_tests("11", HAND)


def test_serving_questions_by_hand():
    check = rl.exercises.check
    assert check("11.littles_law", 12.0) and not check("11.littles_law", 48 / 200)
    assert check("11.spec_tokens", 1 + 0.6 + 0.36 + 0.216)
    assert not check("11.spec_tokens", 0.6 + 0.36 + 0.216)  # the target's own token forgotten
    # H100 SXM: 81559 MiB - 13,476,831,232 B = 72,043,978,752 B; pages: 304, 912, 1504 -> mean 906.67 positions
    # x 524,288 B = 475,354,453 B per sequence -> 151
    assert FREE == 72_043_978_752 and HAND["11.paged_batch"] == 151
    assert check("11.paged_batch", 151) and not check("11.paged_batch", 152)
    assert check("11.spec_pays", "pays") and not check("11.spec_pays", "does not pay")
    costs = {chip: serving.best_batch_under_slo("llama-2-13b", chip, 1024, 256, 25e-3).cost_per_million_tokens(p)
             for chip, p in {"A100": 1.80, "H100": 2.50, "H200": 3.50}.items()}
    assert min(costs, key=costs.get) == "H200"
    assert check("11.slo_chip", "H200") and not check("11.slo_chip", "a100")


def test_slo_chip_target_binds_on_every_chip():
    """11.slo_chip asks for TPOT <= 25 ms because 50 ms does not bind on the H100 and H200: Llama-2-13B's KV cache
    is 2 x 40 layers x 5,120 x 2 bytes = 819,200 B per position, 1,048,576,000 B for 1,280 positions, beside
    26,031,728,640 B of bf16 weights; the driver's bytes of each chip hold 57, 56 and 118 such sequences."""
    per_sequence = 2 * 40 * 5120 * 2 * 1280
    weights = 2 * 13_015_864_320
    fit = {chip: math.floor((rl.get_accelerator(chip).mem_capacity - weights) / per_sequence)
           for chip in ("A100 80GB SXM4", "H100 SXM", "H200 SXM")}
    assert list(fit.values()) == [57, 56, 118]
    for chip, most in fit.items():
        loose = serving.best_batch_under_slo("llama-2-13b", chip, 1024, 256, 50e-3)
        tight = serving.best_batch_under_slo("llama-2-13b", chip, 1024, 256, 25e-3)
        assert tight.batch < most and tight.tpot <= 25e-3  # the target, not memory, sets the batch
        # one more sequence would break the target
        assert serving.continuous("llama-2-13b", chip, tight.batch + 1, 1024, 256).tpot > 25e-3
        # at 50 ms only the A100 is held back by the target; the others run all that fit, well within it
        assert (loose.batch < most) == (chip == "A100 80GB SXM4")


def test_chapter_11_find_the_mistake_by_hand():
    """11.price_slip: the prompt's 827 tokens/s is the library's bound; the fix is a factor of 3600 s per hour."""
    exercises = rl.exercises
    r = serving.request("llama-2-13b", "H100 SXM", batch=8, prompt_len=512, output_len=128)
    assert round(float(r.throughput_per_chip)) == 827
    by_hand = 2.50 * 1e6 / (827 * 3600)                       # 0.8397 per million output tokens
    assert abs(by_hand - 0.8397) < 5e-5
    assert exercises.check("11.price_slip", by_hand)
    assert not exercises.check("11.price_slip", 2.50 * 1e6 / 827)  # the colleague's 3,022


def test_spec_pays_by_hand():
    """11.spec_pays: Llama-2-7B on an A100 80GB (312 TFLOP/s bf16, 2.039 TB/s), batch 128, context 512, k = 4,
    acceptance 0.6, a free draft. Both steps read the weights and the KV cache; the verify step does 5x the FLOPs."""
    params = 6_738_415_616
    read = 2 * params + 128 * 512 * (2 * 32 * 4096 * 2)          # 13.48 GB of weights + 34.36 GB of KV cache
    t_plain = read / 2.039e12                                     # memory-bound: 23.5 ms
    t_verify = max(2 * params * 128 * 5 / 312e12, read / 2.039e12)  # 640 tokens x 2 FLOP per weight: 27.6 ms
    tokens = 1 + 0.6 + 0.6**2 + 0.6**3 + 0.6**4                   # 2.3056 per verify step
    speedup = tokens * t_plain / t_verify
    assert 1.9 < speedup < 2.0 and HAND["11.spec_pays"] == ("pays" if speedup > 1 else "does not pay")
    # the library's bound (attention FLOPs, activations and logits included) lands within 5 % of the hand figure
    s = serving.speculative("llama-2-7b", "A100", batch=128, context=512, k=4, acceptance=0.6)
    assert abs(float(s.speedup) / speedup - 1) < 0.05
