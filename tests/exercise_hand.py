"""Hand computations shared by the chapter exercise tests (tests/test_exercises_chNN.py).

``assert_hand_value`` holds a question to the rule every chapter follows: its expected value equals a
hand computation written in the test (to 1e-9 for a number, exactly for a choice) and the checker
accepts that hand value; for a choice, every other choice is rejected.

``decode_step_bytes`` counts the bytes of one decode step of a dense Llama-style model from its shapes
(the model card's config.json), kernel by kernel, with the course's convention (llm.py): each kernel
reads its inputs and writes its outputs once. It is written from the shapes, not from the library.
"""

import pytest

from roofline_lib.exercises import check, get_question, questions

# config.json of each model (hidden_size, num_attention_heads, num_key_value_heads, head_dim,
# intermediate_size, num_hidden_layers, vocab_size); untied embeddings
LLAMA_2_7B = dict(h=4096, heads=32, kv_heads=32, d=128, inter=11008, layers=32, vocab=32000)
LLAMA_2_13B = dict(h=5120, heads=40, kv_heads=40, d=128, inter=13824, layers=40, vocab=32000)
LLAMA_3_8B = dict(h=4096, heads=32, kv_heads=8, d=128, inter=14336, layers=32, vocab=128256)

BYTES = {"bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def decode_step_bytes(m, batch, context, weight="bf16", kv="bf16"):
    """Bytes of one decode step (one new token for each of ``batch`` sequences attending to ``context``
    positions), bf16 activations."""
    h, H, Hkv, d, i, L, V = m["h"], m["heads"], m["kv_heads"], m["d"], m["inter"], m["layers"], m["vocab"]
    w, k, a, n = BYTES[weight], BYTES[kv], 2, batch

    def mm(n_in, n_out):  # activations [n, n_in] read, weights [n_in, n_out] read, [n, n_out] written
        return a * n * n_in + w * n_in * n_out + a * n * n_out

    layer = (2 * a * n * h                                            # RMSNorm: read, write
             + mm(h, (H + 2 * Hkv) * d)                               # QKV projection
             + 2 * a * n * (H + Hkv) * d                              # RoPE on q and k
             + n * 2 * Hkv * d * (a + k)                              # KV cache write: new K, V in, cache out
             + 2 * a * n * H * d + k * batch * context * 2 * Hkv * d  # attention: q in, o out, the whole cache
             + mm(H * d, h)                                           # output projection
             + 3 * a * n * h                                          # residual add: two in, one out
             + 2 * a * n * h                                          # RMSNorm
             + mm(h, 2 * i) + 3 * a * n * i + mm(i, h)                # gate+up, SiLU x up, down
             + 3 * a * n * h)                                         # residual add
    embedding = n * h * (w + a)                                       # one row per token looked up, written
    return embedding + L * layer + 2 * a * n * h + mm(h, V)           # ... final RMSNorm, LM head


def decode_step_matmul_flops(m, batch, context):
    """FLOPs of the step's matmuls and attention (2 per multiply-add); elementwise work is left out, so
    this is a little below the step's FLOPs: use it only with a margin."""
    h, H, Hkv, d, i, L, V = m["h"], m["heads"], m["kv_heads"], m["d"], m["inter"], m["layers"], m["vocab"]
    per_layer = h * (H + 2 * Hkv) * d + H * d * h + 3 * h * i
    return 2 * batch * (L * per_layer + h * V) + L * 2 * batch * H * context * 2 * d


def memory_bound_time(m, batch, context, peak, bandwidth, **dtypes):
    """max(T_math, T_mem) of a decode step that is memory-bound with a margin of 2 (asserted)."""
    t_mem = decode_step_bytes(m, batch, context, **dtypes) / bandwidth
    assert 2 * decode_step_matmul_flops(m, batch, context) / peak < t_mem
    return t_mem


def assert_hand_value(qid, value, **context):
    q = get_question(qid)
    expected = q.expected(**context)
    if q.kind == "number":
        assert float(expected) == pytest.approx(value, rel=1e-9), f"{qid}: expected {expected}, by hand {value}"
    else:
        assert expected == value, f"{qid}: expected {expected!r}, by hand {value!r}"
        for other in q.choices:
            if other != value:
                assert not check(qid, other, **context).correct, f"{qid}: {other!r} accepted too"
    feedback = check(qid, value, **context)
    assert feedback.correct, feedback.message


def chapter_ids(chapter):
    ids = {q.id for q in questions(f"{chapter}.")}
    assert len(ids) >= 4, f"chapter {chapter} has {len(ids)} questions"
    return ids


def asked_in_notebook(chapter):
    """The question ids the chapter's notebook passes to ``exercises.check``."""
    import json
    import pathlib
    import re

    path = next((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob(f"{chapter}_*.ipynb"))
    used = set()
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            used |= set(re.findall(r"""exercises\.check\(\s*["']([^"']+)["']""", "".join(cell["source"])))
    return used


def chapter_tests(chapter, hand, context=None):
    """The two tests every chapter's file runs, made once here: each question's expected value is its hand
    value (``context``: keyword arguments for questions on the reader's measurement), and every question of
    the chapter has one. Use: ``test_hand_values, test_every_question_has_a_hand_value = chapter_tests(...)``."""
    context = context or {}

    @pytest.mark.parametrize("qid, value", sorted(hand.items()))
    def test_hand_values(qid, value):
        assert_hand_value(qid, value, **context.get(qid, {}))

    def test_every_question_has_a_hand_value():
        assert set(hand) == chapter_ids(chapter)

    return test_hand_values, test_every_question_has_a_hand_value
