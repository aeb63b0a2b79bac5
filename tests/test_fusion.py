"""roofline_lib.llm.fusion: the bytes a fused kernel saves, counted by hand."""

import pytest

import roofline_lib as rl
from roofline_lib.llm import fusion

# ---------------------------------------------------------------- fused chains

def test_gated_mlp_fusion_saves_the_intermediates():
    n, h, i = 16, 4096, 11008
    unfused = fusion.gated_mlp_chain(n, h, i, "bf16")
    fused = fusion.gated_mlp_chain(n, h, i, "bf16", fused=True)
    # unfused reads x twice and moves 8 [n, i] arrays (G, U written; G read; A written, read; U read; P written,
    # read); fused moves P twice
    assert unfused.bytes - fused.bytes == 2 * (n * h + 6 * n * i)
    assert unfused.flops == pytest.approx(fused.flops)


def test_attention_fusion_saves_the_score_matrix():
    B, H, T, S, d = 1, 32, 512, 512, 128
    unfused = fusion.attention_chain(B, H, H, T, S, d)
    fused = fusion.attention_chain(B, H, H, T, S, d, fused=True)
    assert unfused.bytes - fused.bytes == 4 * 2 * B * H * T * S  # S written, read; P written, read
    assert fused.bytes == rl.attention(B, H, H, T, S, d).bytes
    assert fused.flops == rl.attention(B, H, H, T, S, d).flops
