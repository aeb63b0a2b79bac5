"""roofline_lib.llm.occupancy: SM waves, FlashDecoding splits and FlashAttention's split heuristic."""

import pytest

from roofline_lib.llm import occupancy


def test_occupancy_model():
    assert occupancy.sm_utilisation(32, 132) == pytest.approx(32 / 132)
    assert occupancy.sm_utilisation(132, 132) == 1
    assert occupancy.sm_utilisation(133, 132) == pytest.approx(133 / 264)  # a second, nearly empty wave
    # Llama-2-7B, batch 1: FlashAttention-2 launches 32 blocks; FlashDecoding splits the KV sequence
    splits = occupancy.flash_decoding_splits("llama-2-7b", "H200", 1, 32768)
    # 1, 2, 3 splits: 24 %, 48 %, 73 % of 132 SMs; 4 splits: 128 blocks, 97 %, within 85 % of the best
    assert splits == 4
    slow = occupancy.decode_attention_time("llama-2-7b", "H200", 1, 32768)
    fast = occupancy.decode_attention_time("llama-2-7b", "H200", 1, 32768, splits=splits)
    assert slow / fast == pytest.approx(4, rel=1e-9)
    # short context: chunks of at least 256 positions allow only 2 splits
    assert occupancy.flash_decoding_splits("llama-2-7b", "H200", 1, 600) == 2
    assert list(occupancy.flash_decoding_splits("llama-2-7b", "H200", [1, 33], 32768)) == [4, 1]
    # at large batch the plain kernel already fills the chip
    assert occupancy.sm_utilisation(occupancy.decode_attention_blocks("llama-2-7b", 33), 132) == 1


def test_flash_attn_split_heuristic_matches_its_own_comments():
    # flash_api.cpp: "if we have batch * n_heads = 48 and we have 108 SMs, having 2 splits (efficiency = 0.89)
    # is better than having 3 splits (efficiency = 0.67)"
    assert occupancy.flash_attn_num_splits_heuristic(48, 108, 1000) == 2
    # enough blocks for 80 % of the slots: no split
    assert occupancy.flash_attn_num_splits_heuristic(87, 108, 1000) == 1
    # "if we have 64 blocks and choose 11 splits, we'll have 6 * 10 + 4 blocks. If we choose 12 splits ...
    # it's 11 splits anyway": a split count that does not shorten the runs is skipped. 10 blocks on 100 slots,
    # 64 KV blocks: 10 splits fill every slot (best 1.0); 9 would reach 0.9 but cuts the 64 blocks into runs
    # of 8, as 8 splits already do, so it is not eligible and the answer is 10, not 9
    assert occupancy.flash_attn_num_splits_heuristic(10, 100, 64) == 10


def test_flash_attn_picks_7_splits_where_the_course_model_picks_4():
    # Llama-2-7B, batch 1, 32K context, H100 SXM (132 SMs): 32 blocks on 264 slots, 256 KV blocks of 128
    assert occupancy.flash_attn_num_splits("llama-2-7b", "H100", 1, 32768) == 7
    assert occupancy.flash_decoding_splits("llama-2-7b", "H100", 1, 32768) == 4   # one block per SM: 128 / 132
    with pytest.raises(ValueError, match="whole number"):
        occupancy.flash_attn_num_splits("llama-2-7b", "H100", 1.5, 32768)
